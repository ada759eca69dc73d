"""The exact Gaussian benchmark of Watkins-Arora, Appendix C.5.

For the ridge-regularized linear loss the released iterate is an invertible rescaling of the
Gaussian mechanism b_S + Z with sensitivity G, so its privacy profile is exactly

    delta_G(eps) = Phi(G/(2 sigma) - eps sigma/G) - e^eps Phi(-G/(2 sigma) - eps sigma/G)

(Dong et al. 2022, Cor. 2.13), while the integrated-tail certificate (C.13 with zero
log-determinant term, no truncation and Delta_xi = 0) gives

    delta_tail(eps) = (2G/sigma) Q1((sigma/G)(eps - G^2/(2 sigma^2))).

Both depend on sigma/G only. Each function returns a two-sided ball enclosure.
"""

from __future__ import annotations

from ..balls import Q1, ball, fmpq, gaussian_delta


def gaussian_profile(s: fmpq, eps: fmpq):
    """delta_G(eps) of C.5 at noise multiplier s = sigma/G (exact Gaussian-mechanism profile)."""
    s_, e_ = ball(s), ball(eps)
    return gaussian_delta(1 / (2 * s_), e_ * s_, e_)


def integrated_tail_bound(s: fmpq, eps: fmpq):
    """(2/s) Q1(s (eps - 1/(2 s^2))), the integrated-tail certificate of C.5 at s = sigma/G.

    Valid (Lemma C.12) when eps >= 1/(2 s^2) = G^2/(2 sigma^2), i.e. threshold t >= 0.
    """
    s_, e_ = ball(s), ball(eps)
    return 2 / s_ * Q1(s_ * (e_ - 1 / (2 * s_**2)))
