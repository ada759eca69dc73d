"""Bok obligations: every one proved as stated, and every one rejects a perturbed claim."""

import pytest
import sympy as sp

from certify.proofs import FALSE, PROVED, get, obligations
from certify.dpsgd import proofs as Bk

alpha, Delta, u, sigma, lam, eps, p = Bk.alpha, Bk.Delta, Bk.u, Bk.sigma, Bk.lam, Bk.eps, Bk.p
v, w = Bk.v, Bk.w


@pytest.mark.parametrize("ob", obligations("bok"), ids=lambda o: o.id)
def test_obligation_proved_as_stated(ob):
    out = ob.run()
    assert out.verdict == PROVED, (ob.id, out.detail)


def _moments_wrong():
    d = Bk._paper_moments()
    d["E[A^2 B]"] = d["E[A^2 B]"] + 4 * sp.exp(u * Delta**2)  # sign of the e^(u D^2) term flipped
    return d


PERTURBED = [
    ("B-35", dict(exponent=lambda k, D, be: k * (k + 1) * D**2 / 2 - k**2 * be**2 / 8)),
    ("B-16", dict(operator=lambda s_, t_: Delta**2 * (s_ * t_ + t_**2 + t_))),
    ("B-17", dict(claimed=lambda vv, ww: alpha * (alpha - 1) * ww * (vv - ww))),
    ("B-18", dict(claimed=lambda vv, ww: Bk._paper_18(vv, ww) - alpha**2 * (alpha - 1) * ww**2 * vv)),
    ("B-q", dict(expansion=lambda vv, ww: Bk._paper_q_expansion(vv, ww) + (vv - ww))),
    ("B-31", dict(claimed=_moments_wrong())),
    ("B-P5-F", dict(p3_moments=lambda: Bk._paper_p3_general_u() + alpha * (alpha - 1) * 2 * sp.exp(u * Delta**2))),
    ("B-P5-ours", dict(rho3=lambda: -Bk._paper_rho3())),
    ("B-P5-sign", dict(ours=lambda t: t**6 - t**4 - 2 * t**2 - 2 * t)),
    ("B-P5-BEBP", dict(factor=2)),
    ("B-kappa2", dict(kappa=lambda al, D: 2 * D**4 * al * (4 * al**2 + 6 * al + 4))),
    ("B-P2a", dict(threshold=lambda: 1 + sigma**2 * sp.log(2 / p) / (1 - p))),
    ("B-C2", dict(derivative=lambda y: 4 * y * sp.exp(2 * y**2) * (1 - sp.exp(2 * y**2) * Bk.Phi_sym(-3 * y)))),
    ("B-C2-rates", dict(threshold=15)),
    ("B-P4", dict(claimed=lambda: lam / (lam + eps) * (eps / (lam + eps)) ** (eps / lam) * sp.exp(-(eps**2) / (2 * lam) + eps))),
]


@pytest.mark.parametrize("oid,claim", PERTURBED, ids=[p_[0] for p_ in PERTURBED])
def test_perturbed_claim_rejected(oid, claim):
    out = get(oid).run(**claim)
    assert out.verdict == FALSE, (oid, out.verdict, out.detail)


def test_every_obligation_has_a_perturbation():
    assert {ob.id for ob in obligations("bok")} == {p_[0] for p_ in PERTURBED}


def test_sign_tool_rejects_a_polynomial_negative_near_one():
    from certify.proofs.tools import poly_positive_above

    t = sp.Symbol("t", positive=True)
    assert poly_positive_above(t**6 - t**4 - 2 * t**2 + 2 * t, t, 1).verdict == PROVED
    assert poly_positive_above(t**6 - 2 * t**4 - t**2 + 2 * t, t, 1).verdict == FALSE  # negative at t = 1.1
