"""Asymptotics of Bok (2026), Section 6, evaluated in balls (two-sided enclosures).

Regime T -> infinity, p -> 0, T p^2 -> nu (Section 6.1), Delta = 2/sigma:

* Lemma 3 (lossless limit): mu = sqrt(2 nu (e^(4/sigma^2) Phi(3/sigma) + 3 Phi(-1/sigma) - 2)),
  delta_L(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2);
* Proposition 4 (our limit, an upper bound): lambda = 2 nu (e^(4/sigma^2) - e^(2/sigma^2)),
  delta(eps) <= lambda/(lambda + eps) * (eps/(lambda + eps))^(eps/lambda) * exp(-eps^2/(2 lambda) + eps/2)
  (Corollary 1 at alpha = 1 + eps/lambda with the limiting Rényi bound nu alpha (e^(4/sigma^2) - e^(2/sigma^2)));
* Corollary 2: mu^2 > lambda, i.e. e^(4/s^2) Phi(3/s) + 3 Phi(-1/s) - 2 > e^(4/s^2) - e^(2/s^2);
* Proposition 5 (one step, p -> 0): rho = alpha c p^2 - (alpha/2) d p^3 + O(p^4) for our bound and
  rho_B = alpha c p^2 + (alpha (alpha + 2)/2) sqrt((e^(4/s^2) - 1)(e^(24/s^2) - 4 e^(12/s^2) + 6 e^(4/s^2) - 3)) p^3
  + O(p^4) for Birrell et al. (m >= 4), with c = e^(4/s^2) - e^(2/s^2) and
  d = e^(12/s^2) - e^(8/s^2) - 2 e^(4/s^2) + 2 e^(2/s^2) (Appendix A.5).
"""

from __future__ import annotations

from ..balls import Q, arb, ball, fmpq, gaussian_delta


def _e(k: int, sigma: fmpq) -> arb:
    """e^(k/sigma^2)."""
    return ball(fmpq(k) / sigma**2).exp()


def _lemma3_bracket(sigma: fmpq) -> arb:
    """e^(4/s^2) Phi(3/s) + 3 Phi(-1/s) - 2, written as e^(4/s^2) (1 - Q(3/s)) + 3 Q(1/s) - 2 so that the
    huge e^(4/s^2) never multiplies a Phi that is 1 up to rounding (small sigma)."""
    s = ball(sigma)
    return _e(4, sigma) - _e(4, sigma) * Q(3 / s) + 3 * Q(1 / s) - 2


def mu_lossless(nu: fmpq, sigma: fmpq) -> arb:
    """mu of Lemma 3."""
    return (2 * ball(nu) * _lemma3_bracket(sigma)).sqrt()


def delta_lossless_limit(eps: fmpq, nu: fmpq, sigma: fmpq) -> arb:
    """delta_L(eps) of Lemma 3: the limit of the lossless accountant's delta."""
    mu, e = mu_lossless(nu, sigma), ball(eps)
    return gaussian_delta(mu / 2, e / mu, e)


def lambda_ours(nu: fmpq, sigma: fmpq) -> arb:
    """lambda of Proposition 4."""
    return 2 * ball(nu) * (_e(4, sigma) - _e(2, sigma))


def delta_ours_limit_bound(eps: fmpq, nu: fmpq, sigma: fmpq) -> arb:
    """Proposition 4's upper bound on the limiting delta(eps) of our accountant."""
    lam, e = lambda_ours(nu, sigma), ball(eps)
    return lam / (lam + e) * (e / (lam + e)) ** (e / lam) * (-e * e / (2 * lam) + e / 2).exp()


def corollary2_gap(sigma: fmpq) -> arb:
    """(mu^2 - lambda)/(2 nu) of Corollary 2: positive for every sigma > 0 (the corollary's claim)."""
    s = ball(sigma)
    return _e(2, sigma) - 2 + 3 * Q(1 / s) - _e(4, sigma) * Q(3 / s)  # the bracket minus (e^(4/s^2) - e^(2/s^2))


def prop5_coefficients(alpha: int, sigma: fmpq) -> dict[str, arb]:
    """p^2 and p^3 coefficients of Proposition 5 for our bound (8) and Birrell et al.'s (9)."""
    c = _e(4, sigma) - _e(2, sigma)
    d = _e(12, sigma) - _e(8, sigma) - 2 * _e(4, sigma) + 2 * _e(2, sigma)
    birrell3 = arb(alpha) * (alpha + 2) / 2 * ((_e(4, sigma) - 1) * (_e(24, sigma) - 4 * _e(12, sigma) + 6 * _e(4, sigma) - 3)).sqrt()
    return {"p2": alpha * c, "ours_p3": -arb(alpha) / 2 * d, "birrell_p3": birrell3}
