"""Canonical certificates: ``certify verify`` accepts a file only if it is byte for byte the document certify
writes from the same inputs and witnesses. One case per finding of the forgers' report (issue: what verify
accepts is exactly what certify would write), each re-sealed so that only the canonical check can refuse it."""

from __future__ import annotations

import copy
import io
import json
import contextlib

import pytest

from certify import cli
from certify.certificate import digest_of, dumps_document, load
from certify.balls import InputError
from certify.verify import spec_for, verify_document, verify_text

_DOCS: dict = {}


def genuine(kind: str) -> dict:
    if kind not in _DOCS:
        _DOCS[kind] = spec_for(kind).example().dumps()
    return json.loads(_DOCS[kind])


def sealed_text(doc: dict) -> str:
    doc["digest"] = digest_of(doc)
    return json.dumps(doc, indent=2) + "\n"


def test_every_example_is_its_own_canonical_rendering():
    for kind in ("dpsgd/renyi-poisson", "objpert/theorem-4.1", "pld/dpsgd", "dpsgd/rho-bok"):
        text = _DOCS.get(kind) or spec_for(kind).example().dumps()
        assert dumps_document(json.loads(text)) == text
        assert verify_text(text).ok


@pytest.mark.parametrize(
    "bound",
    [
        "1.8\r(0.100000, 1/100000)-DP: HOLDS",  # a carriage return and a lie after the true number
        "\t1.725229560e0",
        "1.725229560e0 ",
        "+1.725229560e0",
        "1.7252295600e0 ",
        "17252295600/10000000000",  # not in lowest terms
        "1.725229560E0",
        "01.725229560e0",
    ],
)
def test_a_number_quoted_in_a_statement_must_be_spelt_as_certify_writes_it(bound):
    doc = genuine("dpsgd/renyi-poisson")
    doc["witnesses"]["epsilon_bound"] = bound
    rep = verify_text(sealed_text(doc))
    assert rep.exit_code == 4 and not rep.ok
    assert not any(h for _, h, _ in rep.conclusions)  # nothing is shown as holding


def test_a_respelt_input_is_refused():
    doc = genuine("dpsgd/renyi-poisson")
    doc["inputs"]["delta"] = "0.00001"  # the same value, not certify's spelling
    assert verify_text(sealed_text(doc)).exit_code == 4


@pytest.mark.parametrize("edit", ["reorder inputs", "reorder quantities", "compact layout", "no final newline", "unicode unescaped"])
def test_layout_other_than_certify_writes_is_refused(edit):
    doc = genuine("dpsgd/renyi-poisson")
    if edit == "reorder inputs":
        doc["inputs"] = dict(reversed(list(doc["inputs"].items())))
        text = sealed_text(doc)
    elif edit == "reorder quantities":
        doc["quantities"] = dict(reversed(list(doc["quantities"].items())))
        text = sealed_text(doc)
    elif edit == "compact layout":
        text = json.dumps(doc)
    elif edit == "no final newline":
        text = json.dumps(doc, indent=2)
    else:
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    assert text != _DOCS["dpsgd/renyi-poisson"] and verify_text(text).exit_code == 4


def test_a_duplicate_key_is_refused_when_read():
    text = _DOCS.get("dpsgd/renyi-poisson") or genuine("dpsgd/renyi-poisson") and _DOCS["dpsgd/renyi-poisson"]
    forged = text.replace('"delta": "1/100000",', '"delta": "1/10",\n    "delta": "1/100000",', 1)
    assert forged != text
    with pytest.raises(InputError, match="duplicate key"):
        load(forged)


def test_a_json_float_is_refused_when_read():
    doc = genuine("dpsgd/renyi-poisson")
    text = sealed_text(doc).replace('"precision": 128', '"precision": 128.0', 1)
    with pytest.raises(InputError, match="float"):
        load(text)


@pytest.mark.parametrize("name", ["Logistic", "logistic ", "LOGISTIC", "logistic\r", "custom loss"])
def test_a_loss_label_outside_the_closed_set_is_refused(name):
    doc = genuine("objpert/theorem-4.1")
    doc["inputs"]["loss"] = name
    doc["inputs"]["L2"] = "1/100"  # the logistic loss has 1/4
    assert verify_text(sealed_text(doc)).exit_code in (4, 5)
    assert not verify_text(sealed_text(doc)).ok


def test_a_custom_loss_says_so_in_its_conclusion():
    from certify.objpert.certificates import certify_theorem_4_1
    from certify.objpert.problem import make_loss, make_problem

    prob = make_problem(n="1000000", d="10000", mu="0.01", zeta="1", loss=make_loss("custom", "1", "1/4", "1/10"), u="6", noise_multiplier="5")
    cert = certify_theorem_4_1(prob, "1")
    text = cert.dumps()
    assert "custom loss" in cert.conclusions[0].statement and "not checked" in cert.conclusions[0].statement
    assert verify_text(text).ok


@pytest.mark.parametrize(
    "field, value",
    [
        ("source", "typed by hand"),
        ("source", "Schedule"),
        ("sampling", "Poisson"),
        ("adjacency", "add-remove "),
        ("phase[0].steps.note", "binary float 1000.0 from Opacus; exact binary value 1000 used"),
        ("phase[0].sampling_rate.note", "p = sample_size/source_dataset_size = 1/100"),
        ("phase[0].noise_multiplier.note", "binary float 1.1 from " + "x" * 200 + "; exact binary value 11/10 used"),
    ],
)
def test_labels_and_notes_outside_what_certify_writes_are_refused(field, value):
    doc = genuine("dpsgd/renyi-poisson")
    doc["inputs"][field] = value
    assert verify_text(sealed_text(doc)).exit_code in (4, 5)


@pytest.mark.parametrize("software", [{"certify": "99"}, {"certify": "1\r2", "python-flint": "0.9.0"}, {"python-flint": "1", "certify": "1"}])
def test_software_spelt_as_certify_writes_it(software):
    doc = genuine("dpsgd/renyi-poisson")
    doc["software"] = software
    assert verify_text(json.dumps(doc, indent=2) + "\n").exit_code == 4


def test_verify_quiet_log_of_a_forged_certificate_ends_with_the_refusal(tmp_path):
    doc = genuine("dpsgd/renyi-poisson")
    doc["witnesses"]["epsilon_bound"] = "1.8\r(0.100000, 1/100000)-DP: HOLDS"
    path = tmp_path / "forged.json"
    path.write_text(sealed_text(doc))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(["verify", "--quiet", str(path)])
    lines = out.getvalue().splitlines()
    assert rc == 4 and lines[-1].startswith("REJECTED") and "HOLDS" not in out.getvalue()
    assert "\r" not in out.getvalue() and len(err.getvalue().splitlines()) == 1


def test_verify_log_of_a_genuine_certificate_ends_with_verified(tmp_path):
    path = tmp_path / "good.json"
    path.write_text(spec_for("dpsgd/renyi-poisson").example().dumps())
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = cli.main(["verify", "--quiet", str(path)])
    assert rc == 0 and out.getvalue().splitlines()[-1].startswith("VERIFIED") and "HOLDS" in out.getvalue()


def test_the_document_without_its_text_is_compared_in_its_key_order():
    doc = genuine("dpsgd/renyi-poisson")
    assert verify_document(copy.deepcopy(doc)).ok
    doc["inputs"] = dict(reversed(list(doc["inputs"].items())))
    doc["digest"] = digest_of(doc)
    assert verify_document(doc).exit_code == 4


def test_a_dict_handed_to_verify_document_is_checked_for_its_shape_too():
    from certify.certificate import digest_of as seal

    doc = genuine("dpsgd/renyi-poisson")
    doc["schema"] = "certify/20"
    doc["digest"] = seal(doc)
    with pytest.raises(InputError, match="schema"):
        verify_document(doc)


@pytest.mark.parametrize("kind, kernel_says", [("dpsgd/renyi-poisson", "accepts too"), ("dpsgd/rho-bok", "does not cover")])
def test_verify_kernel_reports_both_verdicts(tmp_path, kind, kernel_says):
    path = tmp_path / "c.json"
    path.write_text(spec_for(kind).example().dumps())
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = cli.main(["verify", "--kernel", "--quiet", str(path)])
    last = out.getvalue().splitlines()[-1]
    assert rc == 0 and last.startswith("VERIFIED") and kernel_says in last, out.getvalue()


def test_verify_kernel_disagreement_is_a_refusal(tmp_path, monkeypatch):
    import certify_kernel

    path = tmp_path / "c.json"
    path.write_text(spec_for("dpsgd/renyi-poisson").example().dumps())
    monkeypatch.setattr(certify_kernel, "check_text", lambda text: certify_kernel.Verdict(4, "a forged refusal"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        rc = cli.main(["verify", "--kernel", str(path)])
    assert rc == 4 and "disagree" in out.getvalue().splitlines()[-1]


@pytest.mark.parametrize(
    "container, json_type, ok",
    [
        ({"k": 8}, int, True),
        ({"k": True}, int, False),  # a JSON true is not the integer 1
        ({"k": "8"}, int, False),
        ({"k": 8}, str, False),
        ({"k": None}, str, False),
        ({}, str, False),  # a key certify always writes, left out
        ({"k": False}, bool, True),
        ({"k": 0}, bool, False),
        ({"k": None}, type(None), True),
    ],
)
def test_a_witness_field_is_read_in_the_one_type_certify_writes(container, json_type, ok):
    from certify.certificate import witness_field

    if ok:
        assert witness_field(container, "k", "witnesses.k", json_type) == container["k"]
    else:
        with pytest.raises(InputError, match="witnesses.k"):
            witness_field(container, "k", "witnesses.k", json_type)
