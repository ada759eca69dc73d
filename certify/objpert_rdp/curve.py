"""The objective-perturbation Renyi curve of the referee report (arXiv:2411.13682, Corollary 5.2).

Parameters (all exact rationals): L > 0 the Lipschitz constant of the loss, nu > 0 the noise scale of
the objective perturbation, lambda > 0 the regulariser, s >= 0 the curvature (smoothness) bound that
enters the determinant term. With mu = L/nu and eps_det = log(1 + s/lambda) the report's bound is

    D_alpha <= eps_det + alpha mu^2/2 + g(alpha),   g(alpha) = log(2 Phi(mu (alpha - 1)))/(alpha - 1),

the Renyi divergence of the dominating privacy loss l = eps_det + mu^2/2 + mu|Z|, Z ~ N(0, 1)
(certify proofs --paper referee, R-curve). g decreases from sqrt(2/pi) mu to 0 (R-limits,
R-decrease), so D_alpha <= rho_DP alpha with the zCDP constant

    rho_DP = eps_det + mu^2/2 + sqrt(2/pi) mu,

and the (eps, delta) profile of l is, with e = eps - eps_det,

    delta(eps) = 2 delta_G(e) = 2 [Phi(mu/2 - e/mu) - e^e Phi(-mu/2 - e/mu)]   if e > mu^2/2,
    delta(eps) = 1 - 2 e^e Phi(-mu)                                            otherwise.

Every function returns a ball containing the exact value (two-sided; no rounding direction of its
own); Phi is certify.balls.Phi, accurate far into the tails.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..balls import exact_in, InputError, Phi, UndecidedError, arb, ball, decide, exact_str, float_of, fmpq, gaussian_delta
from ..bracket import grow_then_bisect


@dataclass(frozen=True)
class Curve:
    """Exact parameters of the objective-perturbation Renyi curve."""

    L: fmpq
    nu: fmpq
    s: fmpq
    lam: fmpq

    def inputs(self) -> dict[str, str]:
        return {"L": exact_str(self.L), "nu": exact_str(self.nu), "s": exact_str(self.s), "lambda": exact_str(self.lam)}


def make_curve(L, nu, s, lam) -> Curve:
    """Parse and validate (InputError naming the option and the admissible range)."""
    Lq = exact_in(L, "--L", 0, what="Lipschitz constant")
    nq = exact_in(nu, "--nu", 0, what="noise scale")
    sq = exact_in(s, "--s", 0, None, "[)", what="curvature bound")
    lq = exact_in(lam, "--lambda", 0, what="regulariser")
    if Lq / nq > MAX_MU:
        raise InputError("--nu", "mu = L/nu must be at most 1e1000 (beyond it, 4096 bits do not resolve the Renyi claims): admissible nu >= L/1e1000")
    return Curve(Lq, nq, sq, lq)


#: the largest mu = L/nu admitted (above it the claims of Corollary 5.2 are undecided at the top of the ladder)
MAX_MU = fmpq(10) ** 1000


def check_alpha(alpha) -> fmpq:
    a = exact_in(alpha, "--alpha", 1, what="Renyi order")
    return a


def check_epsilon(eps) -> fmpq:
    e = exact_in(eps, "--epsilon", 0, None, "[)")
    return e


#: the largest Gaussian tail argument x whose probability Phi(-x) ~ e^(-x^2/2) a certificate still holds and prints
#: exactly: a decimal of a certificate is read back only above 1e-100000 (certify.balls.MAX_DECIMAL_EXPONENT), and
#: Phi(-670) is about 1e-97480
MAX_TAIL_ARGUMENT = 670


def check_profile_range(c: "Curve", eps: fmpq | None = None) -> None:
    """Decide before evaluating that the privacy profile is within the exact range of certificates (floats of the
    exact inputs: a choice of where to refuse; the command's range check stays the final word):
    mu = L/nu at most MAX_TAIL_ARGUMENT (the profile's Phi(-mu)), and at ``eps`` the tail argument
    x = (eps - log(1 + s/lambda)) nu/L - L/(2 nu) of :func:`delta` at most MAX_TAIL_ARGUMENT."""
    m = float_of(c.L / c.nu)
    if not m <= MAX_TAIL_ARGUMENT:
        raise InputError(
            "--nu",
            f"the privacy profile needs mu = L/nu <= {MAX_TAIL_ARGUMENT} (Phi(-mu) above 1e-97000, the smallest number a "
            f"certificate prints exactly): admissible nu >= L/{MAX_TAIL_ARGUMENT} = {float_of(c.L) / MAX_TAIL_ARGUMENT:.6g}",
        )
    if eps is None:
        return
    det = math.log1p(float_of(c.s / c.lam))
    gap = float_of(eps) - det
    x = gap / m - m / 2 if m > 0 else (math.inf if gap > 0 else 0.0)  # mu below the float range: no division
    if x > MAX_TAIL_ARGUMENT:
        raise InputError(
            "--epsilon",
            f"delta(epsilon) would be below 1e-97000, the smallest number a certificate prints exactly: admissible epsilon "
            f"<= log(1 + s/lambda) + (L/nu) ({MAX_TAIL_ARGUMENT} + L/(2 nu)) = about {det + m * (MAX_TAIL_ARGUMENT + m / 2):.6g} here, "
            f"got {exact_str(eps)[:40]}",
        )


def check_delta(delta) -> fmpq:
    d = exact_in(delta, "--delta", 0, 1)
    return d


def mu(c: Curve) -> arb:
    """mu = L/nu."""
    return ball(c.L / c.nu)


def eps_det(c: Curve) -> arb:
    """Determinant term log(1 + s/lambda) (log1p: no cancellation for small s/lambda)."""
    return ball(c.s / c.lam).log1p()


def g(c: Curve, alpha: fmpq) -> arb:
    """g(alpha) = log(2 Phi(mu (alpha - 1)))/(alpha - 1) (Corollary 5.2).

    For x = mu (alpha - 1) <= 1, log(2 Phi(x)) = log1p(erf(x/sqrt 2)) keeps full relative accuracy as
    alpha -> 1; otherwise log(2 Phi(x)).
    """
    am1 = ball(alpha - 1)
    x = mu(c) * am1
    if x < 1:
        num = (x / arb(2).sqrt()).erf().log1p()
    else:
        num = (2 * Phi(x)).log()
    return num / am1


def rdp(c: Curve, alpha: fmpq) -> arb:
    """The Renyi bound eps_det + alpha mu^2/2 + g(alpha) at order alpha > 1."""
    m = mu(c)
    return eps_det(c) + ball(alpha) * m * m / 2 + g(c, alpha)


def zcdp(c: Curve) -> arb:
    """rho_DP = eps_det + mu^2/2 + sqrt(2/pi) mu: D_alpha <= rho_DP alpha for every alpha > 1."""
    m = mu(c)
    return eps_det(c) + m * m / 2 + (2 / arb.pi()).sqrt() * m


def delta(c: Curve, eps: fmpq) -> arb:
    """delta(eps) of the dominating privacy loss (profile above). Where the ball of e = eps - eps_det
    straddles the kink mu^2/2 the union of the two branches is returned (they agree at the kink)."""
    m = mu(c)
    e = ball(eps) - eps_det(c)
    kink = m * m / 2
    hi = lambda: 2 * gaussian_delta(m / 2, e / m, e)
    lo = lambda: 1 - 2 * e.exp() * Phi(-m)
    if e > kink:
        out = hi()
    elif e <= kink:
        out = lo()
    else:
        out = hi().union(lo())
    if not out.is_finite():
        raise UndecidedError("delta(eps) is not finite at this precision")
    return out


def epsilon_bracket(c: Curve, target: fmpq, rel_width: fmpq = fmpq(1, 10**9), max_steps: int = 200):
    """Exact rationals (eps_lo, eps_hi) with delta(eps_hi) <= target and delta(eps_lo) > target proved
    (eps_lo is None when delta(0) <= target, eps_hi = 0 then). delta is nonincreasing in eps.
    Raises UndecidedError if a comparison stays undecided (caller raises the precision)."""

    def ok(e: fmpq) -> bool:
        return decide(delta(c, e), "<=", ball(target), f"delta({exact_str(e)}) <= {exact_str(target)} undecided")

    if ok(fmpq(0)):
        return None, fmpq(0)
    return grow_then_bisect(
        ok,
        fmpq(0),
        fmpq(1),
        rel_width,
        grow_up=True,
        too_far=lambda e: e > 2**2000,
        exhausted=InputError("--delta", "no epsilon found (target too small)"),
        max_steps=max_steps,
    )
