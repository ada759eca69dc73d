"""Obligations of `certify objpert-rdp` (the objective-perturbation RDP curve): proved as stated, perturbed claims
rejected; the ball box prover finds counterexamples."""

import pytest
import sympy as sp

from certify.balls import arb
from certify.proofs import FALSE, PROVED, UNDECIDED, get, obligations
from certify.objpert_rdp import proofs as R
from certify.proofs.tools import prove_on_box
from fast_subset import fast_subset


OBLIGATIONS = obligations("referee")


# fast suite: R-limits and R-decrease, both ways; R-renyi-def and R-curve (about 3 CPU s of sympy each, shared by
# their proof and their rejection) run in the full suite
SLOW = ("R-renyi-def", "R-curve")


@pytest.mark.parametrize("ob", fast_subset(OBLIGATIONS, keep=[ob for ob in OBLIGATIONS if ob.id not in SLOW]), ids=lambda o: o.id)
def test_obligation_proved_as_stated(ob):
    out = ob.run()
    assert out.verdict == PROVED, (ob.id, out.detail)


PERTURBED = [
    ("R-limits", dict(at_one=lambda c: sp.sqrt(1 / sp.pi) * c)),
    ("R-decrease", dict(h2=lambda t: (R.phi_sym(t) / R.Phi_sym(t) ** 2) * (t * R.Phi_sym(t) + R.phi_sym(t)))),
    ("R-renyi-def", dict(gaussian_value=lambda a, m: a * m**2 / 4)),
    ("R-curve", dict(rdp=lambda a, ed, m: ed + a * m**2 / 2 + 2 * sp.log(2 * R.Phi_sym(m * (a - 1))) / (a - 1))),
]


@pytest.mark.parametrize("oid,claim", fast_subset(PERTURBED, keep=[p for p in PERTURBED if p[0] not in SLOW]), ids=[p[0] for p in PERTURBED])
def test_perturbed_claim_rejected(oid, claim):
    out = get(oid).run(**claim)
    assert out.verdict == FALSE, (oid, out.verdict, out.detail)


def test_every_obligation_has_a_perturbation():
    assert {ob.id for ob in obligations("referee")} == {p[0] for p in PERTURBED}


def test_box_prover_decides_and_refutes():
    # x^2 - x + 1/4 + 1/100 > 0 on [0, 1] (minimum 1/100 at 1/2): proved by bisection
    f = lambda xs: xs[0] * xs[0] - xs[0] + arb(26) / 100
    assert prove_on_box(f, [("0", "1")], ">", 0).verdict == PROVED
    # the same with a flipped constant is refuted at a midpoint
    g = lambda xs: xs[0] * xs[0] - xs[0] + arb(24) / 100
    out = prove_on_box(g, [("0", "1")], ">", 0)
    assert out.verdict == FALSE and "x0=" in out.detail
    # a tangency (minimum exactly 0) is never reported proved
    k = lambda xs: (xs[0] - arb(1) / 2) ** 2
    assert prove_on_box(k, [("0", "1")], ">", 0, max_pieces=200).verdict in (UNDECIDED, FALSE)


def test_decrease_box_refutes_an_increasing_claim():
    # g is decreasing: the claim g' > 0 must be refuted on the same box
    def dg(xs):
        a1, cc = xs
        t = cc * a1
        from certify.balls import Phi

        P = Phi(t)
        dens = (-t * t / 2).exp() / (2 * arb.pi()).sqrt()
        return (t * dens / P - (2 * P).log()) / (a1 * a1)

    res = prove_on_box(dg, [("1/4", "16"), ("1/4", "8")], ">", 0)
    assert res.verdict == FALSE
