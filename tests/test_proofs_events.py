"""Proof obligations of the event accountant (`certify proofs --paper events`): each proved, and a wrong claim refuted."""

import pytest
import sympy as sp

from certify.proofs import obligations
from certify.proofs.core import FALSE, PROVED

FAST = (
    "E-rr-eps",
    "E-laplace-superadditive",
    "E-discrete-laplace",
    "E-rr-sums",
    "E-extra-delta",
    "E-conversion-inverse",
    "E-tree-depth",
    "E-noise-monotone",
)


def _get(oid):
    return next(ob for ob in obligations("events") if ob.id == oid)


@pytest.mark.parametrize("oid", FAST)
def test_obligation_is_proved(oid):
    out = _get(oid).run()
    assert out.verdict == PROVED, out.detail


@pytest.mark.slow
def test_laplace_rdp_integral_is_proved_and_a_wrong_coefficient_refuted():
    from certify.events.proofs import al, b

    ob = _get("E-laplace-rdp")
    assert ob.run().verdict == PROVED
    wrong = al / (2 * al - 1) * sp.exp((al - 1) / b) + al / (2 * al - 1) * sp.exp(-al / b)  # alpha instead of alpha - 1
    assert ob.run(claimed=wrong).verdict == FALSE


def test_randomized_response_identity_refutes_a_wrong_claim():
    from certify.events.proofs import al, e

    wrong = (sp.exp(al * e) + sp.exp((1 - al) * e)) / (2 + sp.exp(e))
    assert _get("E-rr-eps").run(claimed=wrong).verdict == FALSE


def test_catalogue_is_complete():
    pld = {"E-pld-gaussian", "E-pld-laplace", "E-pld-discrete-laplace", "E-pld-kov"}  # proved and refuted in tests/test_events_pld.py
    pld |= {"E-pld-mog-ratio", "E-pld-mog-curve"}  # proved and refuted in tests/test_events_pld_mixture.py
    pld |= {"E-pld-noise-channel"}  # proved and refuted in tests/test_events_pld_calibrate.py
    pld |= {"E-pld-labelled-mixture", "E-pld-tsg-subset", "E-pld-tsg-decomposition"}  # proved and refuted in tests/test_events_tsg.py
    pld |= {"E-pld-gaussian-fold"}  # proved and refuted in tests/test_events_pld_gaussian_fold.py
    assert {ob.id for ob in obligations("events")} == set(FAST) | {"E-laplace-rdp", "E-wor-forward-difference"} | pld


@pytest.mark.slow
def test_without_replacement_forward_difference_is_proved():
    assert _get("E-wor-forward-difference").run().verdict == PROVED
