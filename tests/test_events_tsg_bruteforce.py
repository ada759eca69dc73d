"""An independent brute-force check of certify's TruncatedSubsampledGaussian theorem (issue 22): the mechanism (Poisson
sampling at rate q, a uniformly random B-subset kept when more than B are sampled, the sum of the kept one-dimensional
contributions in [-1, 1] plus N(0, z^2)) against certify's dominating pair (1 - w) PSG(q, z) (+) w PSG(q, z/2),
w = P(Bin(n, q) >= B) (:mod:`certify.events.mechanisms.truncated_subsampled_gaussian`).

The reference, written here with mpmath (34 digits) and exact rationals, apart from the code under test: the EXACT output
laws of M(D) and M(D + x) as finite Gaussian mixtures (every sampled subset with its probability, every truncation
choice uniform among the B-subsets), and H_gamma(P || Q) = P(E) - gamma Q(E) for the set E = {p > gamma q}, its crossing
points located on a grid (step 0.004 standard deviations) and refined by bisection and secant steps in mpmath; P(E) and
Q(E) from the normal CDF. For ANY set E, P(E) - gamma Q(E) <= H_gamma, so the value computed is a lower bound of the
truth: a value above the certified curve is a genuine counterexample. The reference is itself checked against the
closed form of the Poisson-subsampled Gaussian pair (no truncation, the other records contributing 0).

Both directions: "remove" H_gamma(M(D + x) || M(D)) against certify's remove curve, "add" H_gamma(M(D) || M(D + x))
against its add curve; the dataset holding x has n records (|D| = n - 1, dp_accounting's reading) or n + 1 (|D| = n);
the theorem claims both. The test can fail: the same brute force violates the pair without its z/2 component (w = 0)
by more than 0.1 where truncation happens.
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction as Fr

import mpmath
import numpy as np
import pytest

from certify.balls import ball_endpoints, fmpq, workprec
from certify.events.ledger import ledger_of
from certify.events.pld_pairs import pair_of


mp = mpmath.mp
DPS = 34


def mpq(x: Fr):
    return mpmath.mpf(x.numerator) / x.denominator


# --------------------------------------------------------------------------------------------
# the brute-force reference (independent of certify)
# --------------------------------------------------------------------------------------------
def output_law(contribs: list[Fr], q: Fr, B: int) -> dict:
    """The exact law of the kept sum: {mean (Fraction): probability (Fraction)}."""
    m, out = len(contribs), {}
    for mask in range(1 << m):
        S = [contribs[i] for i in range(m) if mask >> i & 1]
        k = len(S)
        p = q**k * (1 - q) ** (m - k)
        if k <= B:
            out[sum(S, Fr(0))] = out.get(sum(S, Fr(0)), 0) + p
        else:
            c = math.comb(k, B)
            for T in itertools.combinations(S, B):
                out[sum(T, Fr(0))] = out.get(sum(T, Fr(0)), 0) + p / c
    assert sum(out.values()) == 1
    return out


def hockey_stick(P: dict, Q: dict, z: Fr, gammas) -> list:
    """H_g(P || Q), P and Q the mixtures sum_a P[a] N(a, z^2), at each rational g > 0 (module docstring: a lower bound
    of the truth, exact up to a missed pair of crossings closer than the grid step)."""
    zm = mpq(z)
    pm = [(mpq(a) / zm, mpq(w)) for a, w in P.items() if w]
    qm = [(mpq(a) / zm, mpq(w)) for a, w in Q.items() if w]
    cs = [float(a) for a, _ in pm + qm]
    xs = np.arange(min(cs) - 14, max(cs) + 14, 0.004)

    def logdens(comps):  # a locator only: the values below are computed in mpmath
        a = np.array([float(c) for c, _ in comps])
        lw = np.array([float(mpmath.log(w)) for _, w in comps])
        t = lw[None, :] - 0.5 * (xs[:, None] - a[None, :]) ** 2
        mx = t.max(1)
        return mx + np.log(np.exp(t - mx[:, None]).sum(1))

    L = logdens(pm) - logdens(qm)

    def dens(comps, x):
        return mpmath.fsum(w * mpmath.exp(-((x - a) ** 2) / 2) for a, w in comps)

    def mass(comps, lo, hi):
        return mpmath.fsum(w * (mpmath.ncdf(hi - a) - mpmath.ncdf(lo - a)) for a, w in comps)

    res = []
    for g in gammas:
        gm = mpq(Fr(g))
        pos = L > math.log(Fr(g))
        f = lambda x: dens(pm, x) - gm * dens(qm, x)  # noqa: E731
        idx = np.nonzero(pos[1:] != pos[:-1])[0]
        roots = []
        for i in idx:
            lo, hi = mpmath.mpf(xs[i]), mpmath.mpf(xs[i + 1])
            a, b, fa = lo, hi, f(lo)
            for _ in range(24):  # bisection, then secant steps
                c = (a + b) / 2
                fc = f(c)
                if (fc > 0) == (fa > 0):
                    a, fa = c, fc
                else:
                    b = c
            r0, r1 = a, b
            f0, f1 = f(r0), f(r1)
            for _ in range(6):
                if f1 == f0:
                    break
                r2 = r1 - f1 * (r1 - r0) / (f1 - f0)
                if not lo <= r2 <= hi:
                    break
                r0, f0, r1, f1 = r1, f1, r2, f(r2)
            roots.append(r1 if lo <= r1 <= hi else (a + b) / 2)
        pts = [-mpmath.inf, *roots, mpmath.inf]
        signs = [bool(pos[0])] + [bool(pos[i + 1]) for i in idx]
        v = mpmath.mpf(0)
        for j, s in enumerate(signs):
            if s:
                v += mass(pm, pts[j], pts[j + 1]) - gm * mass(qm, pts[j], pts[j + 1])
        res.append(v)
    return res


def truth(D: list[Fr], x: Fr, q: Fr, B: int, z: Fr, gammas) -> dict:
    P0, P1 = output_law(D, q, B), output_law([*D, x], q, B)
    return {"remove": hockey_stick(P1, P0, z, gammas), "add": hockey_stick(P0, P1, z, gammas)}


def psg_H(direction, q, d, g):
    """The closed form of the Poisson-subsampled Gaussian pair (remove: (1-q) N(0,1) + q N(d,1) vs N(0,1); add: the
    reverse): its likelihood ratio is monotone, so the optimal set is a half-line."""
    Phi = mpmath.ncdf
    if direction == "remove":
        if g <= 1 - q:
            return 1 - g
        t = (mpmath.log((g - (1 - q)) / q) + d * d / 2) / d
        return (1 - q) * (1 - Phi(t)) + q * (1 - Phi(t - d)) - g * (1 - Phi(t))
    if g * (1 - q) >= 1:
        return mpmath.mpf(0)
    t = (mpmath.log((1 / g - (1 - q)) / q) + d * d / 2) / d
    return Phi(t) - g * ((1 - q) * Phi(t) + q * Phi(t - d))


def binom_tail(n, q, B):
    return sum((math.comb(n, k) * q**k * (1 - q) ** (n - k) for k in range(B, n + 1)), Fr(0))


def theorem_H(direction, q: Fr, z: Fr, w: Fr, g: Fr):
    qm, zm, gm, wm = mpq(q), mpq(z), mpq(g), mpq(w)
    return (1 - wm) * psg_H(direction, qm, 1 / zm, gm) + wm * psg_H(direction, qm, 2 / zm, gm)


# --------------------------------------------------------------------------------------------
# certify's curve
# --------------------------------------------------------------------------------------------
def certified_upper(n: int, q: Fr, B: int, z: Fr, gammas) -> dict:
    """The upper endpoints of certify's (remove, add) curve balls at each gamma, as mpf."""
    ev = {
        "class_name": "TruncatedSubsampledGaussianDpEvent",
        "dataset_size": n,
        "sampling_probability": f"{q.numerator}/{q.denominator}",
        "truncated_batch_size": B,
        "noise_multiplier": f"{z.numerator}/{z.denominator}",
    }
    mech = ledger_of(ev, "add-remove").entries[0][0]
    out = {}
    for direction, curve in zip(("remove", "add"), pair_of(mech, "add-remove")):
        vals = []
        with workprec(160):
            f = curve.evaluator()
            for g in gammas:
                v, _ = f(fmpq(g.numerator, g.denominator))
                hi = ball_endpoints(v)[1]
                vals.append(mpmath.mpf(int(hi.p)) / int(hi.q))
        out[direction] = vals
    return out


GAMMAS = [Fr(1, 2), Fr(9, 10), Fr(1), Fr(11, 10), Fr(5, 4), Fr(3, 2), Fr(2), Fr(3), Fr(5), Fr(8), Fr(13), Fr(40)]


def configs(m: int, seed: int = 0) -> dict:
    """(D, x): x = +1 with the others -1 (the largest shift), all +1, mixed signs, and a random one."""
    rng = random.Random(seed * 100 + m)
    return {
        "x=+1,others=-1": ([Fr(-1)] * m, Fr(1)),
        "all+1": ([Fr(1)] * m, Fr(1)),
        "mixed": ([Fr((-1) ** i) for i in range(m)], Fr(1)),
        "random": ([Fr(rng.randint(-8, 8), 8) for _ in range(m)], Fr(rng.choice([-8, -5, 5, 8]), 8)),
    }


def check_case(m: int, q: Fr, B: int, z: Fr, cfgs: dict, gammas=GAMMAS) -> float:
    """Every configuration's truth (|D| = m) below certify's curve for n = m + 1 and n = m, and below the closed form at
    the proof's own weight P(Bin(m, q) >= B) (the sharpest claim); returns the largest truth / certified ratio."""
    mp.dps = DPS
    certs = {n: certified_upper(n, q, B, z, gammas) for n in (m, m + 1) if n >= 1}
    wD = binom_tail(m, q, B)
    worst = 0.0
    for name, (D, x) in cfgs.items():
        tr = truth(D, x, q, B, z, gammas)
        for direction in ("remove", "add"):
            for i, g in enumerate(gammas):
                t = tr[direction][i]
                tight = theorem_H(direction, q, z, wD, g)
                assert t <= tight + mpmath.mpf(10) ** -28, (name, m, q, B, z, direction, g, t, tight)
                for n, c in certs.items():
                    assert t <= c[direction][i], (name, n, q, B, z, direction, g, t, c[direction][i])
                    if c[direction][i] > 1e-20:
                        worst = max(worst, float(t / c[direction][i]))
    return worst


# --------------------------------------------------------------------------------------------
# the reference checked against the closed form (no truncation)
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("q,z", [(Fr(1, 2), Fr(1)), (Fr(9, 10), Fr(1, 2)), (Fr(1, 4), Fr(2))])
def test_reference_is_the_poisson_subsampled_gaussian_without_truncation(q, z):
    mp.dps = DPS
    tr = truth([Fr(0)] * 3, Fr(1), q, 5, z, GAMMAS)
    for direction in ("remove", "add"):
        for g, t in zip(GAMMAS, tr[direction]):
            assert abs(t - psg_H(direction, mpq(q), 1 / mpq(z), mpq(g))) < mpmath.mpf(10) ** -30, (direction, g)


def test_reference_law_of_truncation():
    """B = 1, D = {a, b} = {-1, -1}, x = +1, q = 1/2, every subset of probability 1/8, by hand: {} gives 0; {x} +1;
    {a}, {b} -1; {x, a}, {x, b} keep x w.p. 1/2; {a, b} -1; {x, a, b} keeps x w.p. 1/3. So P(0) = 1/8,
    P(+1) = 1/8 + 2 (1/8)(1/2) + (1/8)(1/3) = 7/24."""
    assert output_law([Fr(-1), Fr(-1)], Fr(1, 2), 1) == {Fr(0): Fr(1, 4), Fr(-1): Fr(3, 4)}
    law = output_law([Fr(-1), Fr(-1), Fr(1)], Fr(1, 2), 1)
    p1 = Fr(1, 8) + 2 * Fr(1, 8) * Fr(1, 2) + Fr(1, 8) * Fr(1, 3)
    assert law == {Fr(0): Fr(1, 8), Fr(1): p1, Fr(-1): 1 - Fr(1, 8) - p1}


# --------------------------------------------------------------------------------------------
# the theorem against the brute force
# --------------------------------------------------------------------------------------------
FAST = [
    (2, Fr(9, 10), 1, Fr(1, 2)),
    (3, Fr(3, 4), 1, Fr(1)),
    (3, Fr(1, 2), 2, Fr(1, 2)),
    (4, Fr(1, 4), 1, Fr(2)),
]


@pytest.mark.parametrize("m,q,B,z", FAST)
def test_mechanism_below_certified_curve(m, q, B, z):
    assert check_case(m, q, B, z, configs(m)) <= 1


def test_dropping_the_half_noise_component_is_violated():
    """The pair without its z/2 component, PSG(q, z) alone (w = 0), is NOT a dominating pair when truncation happens:
    |D| = 2, q = 9/10, B = 1, z = 1/2, x = +1 and the others -1 exceed it by more than 0.1 (and certify's curve holds)."""
    mp.dps = DPS
    q, B, z = Fr(9, 10), 1, Fr(1, 2)
    tr = truth([Fr(-1)] * 2, Fr(1), q, B, z, GAMMAS)
    excess = max(t - theorem_H(d, q, z, Fr(0), g) for d in ("remove", "add") for g, t in zip(GAMMAS, tr[d]))
    assert excess > 0.1
    # and the weight matters: |D| = 2, q = 9/10, B = 2, z = 1 (w = P(Bin(2, 9/10) >= 2) = 81/100) needs a weight above
    # 0.285 on the z/2 component (at gamma = 3); at w = 1/4 the truth exceeds the labelled pair by more than 0.01
    q, B, z = Fr(9, 10), 2, Fr(1)
    tr = truth([Fr(-1)] * 2, Fr(1), q, B, z, GAMMAS)
    assert max(t - theorem_H(d, q, z, Fr(1, 4), g) for d in ("remove", "add") for g, t in zip(GAMMAS, tr[d])) > 0.01
    assert max(t - theorem_H(d, q, z, binom_tail(2, q, B), g) for d in ("remove", "add") for g, t in zip(GAMMAS, tr[d])) <= 0


@pytest.mark.slow
@pytest.mark.parametrize("m", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("q", [Fr(1, 4), Fr(1, 2), Fr(3, 4), Fr(9, 10)])
@pytest.mark.parametrize("z", [Fr(1, 2), Fr(1), Fr(2)])
def test_mechanism_below_certified_curve_sweep(m, q, z):
    for B in range(1, m + 2):
        assert check_case(m, q, B, z, configs(m, seed=1)) <= 1
