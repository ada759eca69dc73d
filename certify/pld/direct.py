"""Direct one-step discretisation of a pair given by its privacy-loss law: losses rounded to the grid.

Used for pairs whose curve has kinks (finite-output pairs: randomized response, the Kairouz-Oh-Viswanath pair, the
discrete Laplace shift; the Laplace pair's atoms at +-eps0): there the tangent lines of :mod:`certify.pld.discretise`
lose about h/2 per step on the optimistic side, while rounding the losses themselves loses nothing at a loss that
falls on the grid and at most h per atom otherwise.

Why it dominates (the proof; each step a check in balls below). For a pair (P, Q) with privacy loss
L = log(dP/dQ) in (-inf, +inf] (+inf where Q = 0),

    f(gamma) = H_gamma(P || Q) = int (p - gamma q)_+ = E_P[(1 - gamma e^(-L))_+]              (gamma >= 0).

A measure that carries, for every part of P's loss law, that part's P-mass at a grid loss R has the curve
g(gamma) = sum_j m_j (1 - gamma e^(-j h))_+ + m_inf (:mod:`certify.pld.discretise`, "Objects"). The integrand
(1 - gamma e^(-R))_+ is non-decreasing in R for every gamma >= 0 and every term is non-decreasing in its mass, so

* pessimistic: every loss rounded UP (R = j h >= L: atom index ceil(L / h); the continuous part's mass on
  ((j-1) h, j h] placed at j h), every mass rounded UP to a multiple of 2^-K, the mass at +inf rounded up: g >= f
  for every gamma >= 0;
* optimistic: every loss rounded DOWN (index floor(L / h); the mass on [j h, (j+1) h) at j h), masses rounded DOWN,
  the mass at +inf rounded down: g <= f for every gamma >= 0.

Domination for every gamma >= 0 is what the composition needs (:mod:`certify.pld.discretise`, Zhu-Dong-Wang 2022
Thm 10). The total masses need not be 1 (not relied on). Checks (recorded as the one-step ``margin``): an atom's
index is decided exactly when its loss is a known rational, else by the sign of p e^(-j h) - q (decided at more bits,
:func:`certify.pld.curves.sign_of`; undecided -> DiscretisationError); every rounded mass M 2^-K is compared with
the ball of the mass it replaces: margin = min (M 2^-K - upper) >= 0 (pessimistic), min (lower - M 2^-K) >= 0
(optimistic).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..balls import arb, ball, fmpq, fmpz, workprec
from .curves import sign_of
from .discretise import EXTRA_PREC, DiscretisationError, OneStep, _dec


@dataclass(frozen=True)
class LossLaw:
    """P's privacy-loss law, in balls at the current precision.

    ``atoms()``: [(p, q, loss)]: P-mass p > 0 at the loss log(p / q) (q the matching Q-mass), ``loss`` the exact
    rational loss when known (else None: decided from p, q); ``inf()``: the P-mass at +inf (or None);
    ``continuous``: None or (lo, hi, F): a part with losses in the open interval (lo, hi) (exact rationals) whose
    P-mass on (a, b] is F(b) - F(a) (F: arb -> arb, non-decreasing on [lo, hi])."""

    atoms: Callable
    inf: Callable | None = None
    continuous: tuple | None = None
    #: None or (jlo, jhi, G): a part with losses in (jlo h, jhi h] whose P-mass with loss <= j h is G(j) (an int j;
    #: G(jlo) = 0 and G(jhi) = that part's total, exactly: the law's obligation), a loss law without point masses
    grid_cdf: tuple | None = None


def _atom_index(p: arb, q: arb, loss: fmpq | None, h: fmpq, up: bool) -> int:
    """ceil(L / h) (``up``) or floor(L / h) for L = log(p / q), exact or decided in balls."""
    if loss is not None:
        x = loss / h
        return int(x.ceil()) if up else int(x.floor())
    x = (p / q).log() / ball(h)
    j = int(x.mid().floor().unique_fmpz()) + (1 if up else 0)
    hb = ball(h)

    def side(j):  # > 0: j h > L (p e^(-j h) < q); < 0: j h < L
        return sign_of(lambda: q - p * (-(hb * j)).exp())

    for _ in range(64):
        s = side(j)
        if s == 0:
            raise DiscretisationError(f"direct discretisation: the loss of an atom is undecided against grid index {j}")
        if up:
            if s < 0:
                j += 1
                continue
            if side(j - 1) > 0:
                j -= 1
                continue
        else:
            if s > 0:
                j -= 1
                continue
            if side(j + 1) < 0:
                j += 1
                continue
        return j
    raise DiscretisationError("direct discretisation: an atom's grid index was not found")  # pragma: no cover


def _check_cells(n: int) -> None:
    """Decide work before doing it: a continuous part costs one ball evaluation per grid cell it covers."""
    from ..limits import cap

    if n > cap("pld_one_step_points"):
        raise DiscretisationError(f"direct discretisation: the continuous part covers {n} grid cells (more than {cap('pld_one_step_points')})")


def one_step(name: str, law: LossLaw, h: fmpq, K: int, pessimistic: bool) -> OneStep:
    """The pessimistic (losses and masses rounded up) or optimistic (down) measure of ``law`` (module docstring)."""
    up = pessimistic
    if law.continuous is not None:
        _check_cells(int(((law.continuous[1] - law.continuous[0]) / h).ceil()) + 2)
    if law.grid_cdf is not None:
        _check_cells(law.grid_cdf[1] - law.grid_cdf[0])
    with workprec(K + EXTRA_PREC):
        cells: dict[int, arb] = {}
        for p, q, loss in law.atoms():
            j = _atom_index(p, q, loss, h, up)
            cells[j] = cells.get(j, arb(0)) + p
        if law.continuous is not None:
            lo, hi, F = law.continuous
            hb = ball(h)
            if up:  # (j-1) h < l <= j h
                first, last = int((lo / h).floor()) + 1, int((hi / h).ceil())
            else:  # j h <= l < (j+1) h
                first, last = int((lo / h).floor()), int((hi / h).ceil()) - 1
            for j in range(first, last + 1):
                a, b = (j - 1, j) if up else (j, j + 1)
                la = ball(lo) if fmpq(a) * h <= lo else hb * a
                lb = ball(hi) if fmpq(b) * h >= hi else hb * b
                cells[j] = cells.get(j, arb(0)) + (F(lb) - F(la))
        if law.grid_cdf is not None:
            jlo, jhi, G = law.grid_cdf
            prev = G(jlo)
            for j in range(jlo + 1, jhi + 1):
                cur = G(j)
                k = j if up else j - 1  # mass of ((j-1) h, j h]: at j h (up) or (j-1) h (down)
                cells[k] = cells.get(k, arb(0)) + (cur - prev)
                prev = cur
        unit = fmpz(1) << K
        masses: dict[int, int] = {}
        margin = None
        for j, m in cells.items():
            if not m.is_finite():
                raise DiscretisationError(f"direct discretisation: the mass at grid index {j} is not finite")
            if up:
                M = int((m.upper().fmpq() * unit).ceil())
                slack = fmpq(M) / unit - m.upper().fmpq()
            else:  # a mass is >= 0: its lower bound is max(lower endpoint, 0)
                low = max(m.lower().fmpq(), fmpq(0))
                M = int((low * unit).floor())
                slack = low - fmpq(M) / unit
            margin = slack if margin is None or slack < margin else margin
            if M:
                masses[j] = M
        inf = 0
        if law.inf is not None:
            mi = law.inf()
            low = max(mi.lower().fmpq(), fmpq(0))
            inf = int((mi.upper().fmpq() * unit).ceil()) if up else int((low * unit).floor())
            slack = fmpq(inf) / unit - mi.upper().fmpq() if up else low - fmpq(inf) / unit
            margin = slack if margin is None or slack < margin else margin
    if margin is None or margin < 0:
        raise DiscretisationError("direct discretisation: a rounded mass is on the wrong side")  # pragma: no cover
    lo = min(masses, default=0)
    from ..limits import cap

    if max(masses, default=0) - lo + 1 > cap("pld_one_step_span"):
        raise DiscretisationError(f"direct discretisation: the losses span more than {cap('pld_one_step_span')} grid cells")
    vec = [0] * (max(masses, default=0) - lo + 1)
    for j, M in masses.items():
        vec[j - lo] = M
    total = sum(masses.values()) + inf
    checks = {
        "margin": margin,
        "method": "direct: losses rounded " + ("up" if up else "down") + " to the grid, masses " + ("up" if up else "down"),
        "atoms": len(masses),
        "masses_nonnegative": True,
        ("total_P_mass_upper" if up else "total_P_mass_lower"): _dec(fmpq(total, 1 << K)),
    }
    return OneStep(name, pessimistic, K, lo, vec, inf, checks)


def one_steps(name: str, law: LossLaw, h: fmpq, K: int) -> tuple[OneStep, OneStep]:
    """(pessimistic, optimistic) direct one-step measures of ``law``."""
    return one_step(name, law, h, K, True), one_step(name, law, h, K, False)
