"""Certificates of Theorem 4.1: what the checker counts, exact inputs, and rejection of each kind of tampering.

The checks every kind must pass (round trip, 2x/4x precision, determinism, truncated files) are in
test_kind_conformance.py."""

import json

import pytest

from certify.balls import InputError
from certify.certificate import digest_of, load
from certify.objpert import tables as T
from certify.objpert.certificates import certify_theorem_4_1
from certify.verify import verify_document, verify_text


@pytest.fixture(scope="module")
def cert_text():
    return certify_theorem_4_1(T.example_problem("1/100"), "1", "1500", "1e-7").dumps()


def reseal(doc):
    """Recompute the digest, as a forger would, so that only the re-derivation can catch the edit."""
    doc["digest"] = digest_of(doc)
    return doc


def test_round_trip_verifies(cert_text):
    rep = verify_text(cert_text)
    assert rep.ok, rep.problems
    doc = json.loads(cert_text)
    assert len(rep.checked) == len(doc["quantities"]) + len(doc["claims"]) + 2  # + the budget and the canonical layout
    assert [s for s, h, _ in rep.conclusions if h] == [c["statement"] for c in doc["conclusions"]]


def test_no_floats_anywhere_in_inputs(cert_text):
    doc = json.loads(cert_text)
    assert all(isinstance(v, str) for v in doc["inputs"].values())
    assert doc["inputs"]["mu"] == "1/100" and doc["inputs"]["target_delta"] == "1/10000000"


def test_digest_catches_unsealed_edit(cert_text):
    doc = json.loads(cert_text)
    doc["quantities"]["delta"]["upper"] = "5.0e-8"
    rep = verify_document(doc)
    assert not rep.ok and any("digest" in p for p in rep.problems)


@pytest.mark.parametrize(
    "edit,needle",
    [
        (lambda d: d["inputs"].__setitem__("mu", "1/99"), "eta"),
        (lambda d: d["inputs"].__setitem__("epsilon", "1/100"), ""),
        (lambda d: d["inputs"].__setitem__("n", "999999"), "noise_multiplier"),
        (
            lambda d: (d["inputs"].__setitem__("n", "999999"), d["inputs"].pop("noise_multiplier"), d["inputs"].__setitem__("sigma", "1/99999")),
            "quantity",
        ),
        (lambda d: d["quantities"]["delta"].__setitem__("upper", "5.0e-8"), "delta"),
        (lambda d: d["quantities"]["delta"].__setitem__("lower", "5.2e-8"), "delta"),
        (lambda d: d["quantities"]["delta"]["ball"]["mid"].__setitem__(1, d["quantities"]["delta"]["ball"]["mid"][1] - 1), "delta"),
        (lambda d: d["quantities"]["delta"]["ball"]["rad"].__setitem__(1, d["quantities"]["delta"]["ball"]["rad"][1] + 30), "delta"),
        (lambda d: d["quantities"].pop("tau_star"), "tau_star"),
        (lambda d: d["claims"][2].__setitem__("holds", False), "dp_4_1"),
        (lambda d: d["claims"][2].__setitem__("rhs", "5.1e-8"), "dp_4_1"),
        (lambda d: d["claims"].pop(0), "claims"),
        (lambda d: d["witnesses"].__setitem__("reported_delta", "5.0e-8"), "reported_delta"),
        (lambda d: d["witnesses"].__setitem__("iterations", 1400), "witness"),
        (lambda d: d["witnesses"]["theorem_C13"].__setitem__("first_passing_iterations", 518), "witness"),
        (lambda d: d["witnesses"]["theorem_C13"]["failures"][-1].__setitem__("reason", "eps < s_N"), "witness"),
        (lambda d: d["witnesses"]["theorem_C13"]["failures"].pop(1), "witness"),
        (lambda d: d["precision"].__class__ and d.__setitem__("kind", "objpert/unknown"), "kind"),
    ],
)
def test_tampering_is_rejected(cert_text, edit, needle):
    doc = json.loads(cert_text)
    try:
        edit(doc)
        reseal(doc)
        rep = verify_document(doc)
    except InputError as err:  # unknown kind
        assert needle in str(err)
        return
    assert not rep.ok
    assert needle in " ".join(rep.problems)


@pytest.mark.parametrize("text", ["", "{", "[]", '{"schema": "certify/1"}', "not json"])
def test_malformed_or_truncated_rejected(text):
    with pytest.raises(InputError):
        load(text)
