"""Proof obligations of the PLD accountant: all proved, and perturbed claims are rejected."""

from __future__ import annotations

import sympy as sp

from certify.proofs import FALSE, PROVED, obligations


def _ob(i):
    return next(ob for ob in obligations("pld") if ob.id == i)


def test_all_proved():
    obs = obligations("pld")
    assert len(obs) == 7
    for ob in obs:
        out = ob.run()
        assert out.verdict == PROVED, (ob.id, out)


def test_perturbed_claims_rejected():
    a, b, A, B = sp.symbols("a_inf b_inf A B", nonnegative=True)
    assert _ob("PLD-inf-mass").run(claimed=a * B + b * A).verdict != PROVED
    x = sp.Symbol("x", real=True)
    out = _ob("PLD-slope").run(remove=lambda x_: (1 - sp.erf(x_ / sp.sqrt(2))) / 2)  # wrong sign
    assert out.verdict == FALSE
    p1, p2, q1, q2, g = sp.symbols("p1 p2 q1 q2 gamma", positive=True)
    assert _ob("PLD-product").run(claimed=p2 * (p1 - g * q1)).verdict != PROVED
    assert x is not None


def test_swap_obligations_reject_perturbations():
    """The identity H_g(Q||P) = 1 - g + g H_(1/g)(P||Q) behind the derived add direction, and its monotonicity."""
    g = sp.Symbol("g", positive=True)
    assert _ob("PLD-swap").run(claimed=sp.Integer(0)).verdict != PROVED
    assert _ob("PLD-swap-monotone").run(scale=-g).verdict != PROVED
