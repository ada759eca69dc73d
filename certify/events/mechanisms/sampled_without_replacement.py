"""SampledWithoutReplacementDpEvent(source_dataset_size n, sample_size m, GaussianDpEvent(sigma)): a uniformly random
subset of m of the n records, then the Gaussian mechanism; REPLACE_ONE only (n is public), as in dp_accounting.

Wang, Balle, Kasiviswanathan (2019), arXiv:1808.00087, "Subsampled Rényi DP and analytical moments accountant":
with gamma = m/n and eps(j) = j/(2 sigma^2) the Gaussian's RDP (Mironov17 Table II), for every integer alpha >= 2

    A(alpha) = 1 + gamma^2 C(alpha,2) min{4 (e^eps(2) - 1), 2 e^eps(2)}
                 + sum_{j=3..alpha} gamma^j C(alpha,j) min{4 D_j, 2 e^((j-1) eps(j))},
    RDP(alpha) <= log A(alpha) / (alpha - 1),

the general bound of WBK19 Thm 9 (whose factor min{2, (e^eps(inf) - 1)^j} is 2 for the Gaussian: eps(inf) = inf),
refined by Thm 27 (the branch 4 D_j, the bound dp_accounting's ``_compute_rdp_sample_wor_gaussian`` evaluates for
alpha <= 256; above 256 it keeps the Thm 9 branch only, and so do we). D_j = Delta^j for even j and
sqrt(Delta^(j-1) Delta^(j+1)) for odd j, with Delta^l the l-th forward difference at 0 of x -> e^((x-1) eps(x)):

    Delta^l = sum_{k=0..l} (-1)^(l-k) C(l,k) e^(k(k-1)/(2 sigma^2)) = E_Q[(P/Q - 1)^l]   (P, Q the Gaussian pair),

the second form (obligation ``E-wor-forward-difference``) showing Delta^l >= 0 for even l. A ball of Delta^l that
is not certainly positive (cancellation) drops the branch: the bound stays valid, only looser.
Fractional alpha: log A is bounded on the chord between floor(alpha) and ceil(alpha) (WBK19 Cor. 10: the
cumulant generating function (alpha-1) RDP(alpha) of every pair is convex with value 0 at alpha = 1), as
dp_accounting does. m = 0: null (NoOp); m = n: the Gaussian itself, alpha/(2 sigma^2). sigma in [1/100, 10^4].
Rounding: every term a ball (Arb, outward); the forward differences at a precision raised by the bits their
cancellation can cost. UPPER BOUND only. Not pure.
"""

from __future__ import annotations

import math
from functools import lru_cache

from ...balls import InputError, arb, ball, ctx, float_of, fmpq, require_in, workprec
from ...event_tree import EventView
from .base import REPLACE_ONE, Mechanism, integer_in

#: the largest order at which the forward-difference branch (Thm 27) is used (dp_accounting's max_alpha)
DIFF_MAX = 256
#: the largest dataset size accepted
MAX_N = 10**15
#: the noise multipliers accepted: below 1/100 the bound is astronomically large (no privacy to certify), above 10^4
#: the forward differences' cancellation would cost more bits than a certificate's budget allows
SIGMA_MIN, SIGMA_MAX = fmpq(1, 100), fmpq(10**4)


def _extra_bits(sigma: fmpq) -> int:
    """Bits the alternating sums of Delta^l (l <= DIFF_MAX + 1) can lose: about l (2 + log2 max(1, sigma))."""
    return int((DIFF_MAX + 1) * (2 + max(0.0, math.log2(max(1.0, float_of(sigma)))))) + 64


def _differences(sigma: fmpq, prec: int) -> tuple:
    """(Delta^0, ..., Delta^(DIFF_MAX+1)) as balls, accurate to about max(prec, 128) bits: the difference table of
    f(k) = e^(k(k-1)/(2 sigma^2)), k = 0..DIFF_MAX+1 (element 0 after l passes = Delta^l), made once per sigma and
    precision class (the float choice at 64 bits and the balls at 128 share one table)."""
    return _difference_table(int(sigma.p), int(sigma.q), max(prec, 128))


@lru_cache(maxsize=64)
def _difference_table(sp: int, sq: int, prec: int) -> tuple:
    sigma = fmpq(sp, sq)
    L = DIFF_MAX + 1
    with workprec(prec + _extra_bits(sigma)):
        c = ball(1 / (2 * sigma * sigma))
        row = [(c * (k * (k - 1))).exp() for k in range(L + 1)]
        out = [row[0]]
        for _ in range(L):
            row = [row[i + 1] - row[i] for i in range(len(row) - 1)]
            out.append(row[0])
    with workprec(prec):
        return tuple(+d for d in out)  # unary plus rounds to prec bits (outward)


def _log_A(alpha: int, gamma: fmpq, sigma: fmpq) -> arb:
    """log A(alpha) of WBK19 Thms 9/27 (module docstring) for integer alpha >= 1 (log A(1) = 0)."""
    if alpha <= 1:
        return arb(0)
    c = ball(1 / (2 * sigma * sigma))
    g = ball(gamma)
    e2 = 2 * c
    total = arb(1) + g * g * (alpha * (alpha - 1) // 2) * min_upper(4 * e2.expm1(), 2 * e2.exp())
    deltas = _differences(sigma, ctx.prec) if alpha <= DIFF_MAX else None
    gj = g * g
    for j in range(3, alpha + 1):
        gj = gj * g
        binom = math.comb(alpha, j)  # an exact integer
        other = 2 * (c * (j * (j - 1))).exp()  # 2 e^((j-1) eps(j))
        if deltas is not None:
            if j % 2 == 0:
                d = deltas[j]
            else:
                lo, hi = deltas[j - 1], deltas[j + 1]
                d = (lo * hi).sqrt() if lo > 0 and hi > 0 else None
            if d is not None and d > 0:
                other = min_upper(4 * d, other)
        total = total + gj * binom * other
    return total.log()


def min_upper(x: arb, y: arb) -> arb:
    """The ball with the smaller upper endpoint (both bound the same quantity from above)."""
    return x if x.upper() <= y.upper() else y


class SampledWithoutReplacementGaussian(Mechanism):
    CLASS = "SampledWithoutReplacementDpEvent"
    FIELDS = ("source_dataset_size", "sample_size", "event")
    PARAMS = ("source_dataset_size", "sample_size", "noise_multiplier")
    RELATIONS = frozenset({REPLACE_ONE})
    EQUATION = "WBK19 Thms 9 and 27 (sampling without replacement); upper bound"
    UPPER_ONLY = "sampling without replacement is bounded by Wang-Balle-Kasiviswanathan 2019 Thms 9/27: an upper bound only"

    @classmethod
    def validate(cls, values, where):
        n = integer_in(values, "source_dataset_size", where, 1, MAX_N)
        integer_in(values, "sample_size", where, 0, int(n.p))
        require_in(f"{where}.noise_multiplier", values["noise_multiplier"], SIGMA_MIN, SIGMA_MAX, "[]", shown="in [1/100, 10^4]")
        return values

    @classmethod
    def read(cls, view):
        view.check_fields(cls.FIELDS)
        values, notes = {}, {}
        for k in ("source_dataset_size", "sample_size"):
            values[k], notes[k] = view.number(k)
        inner = EventView(view.field("event"), f"{view.where}.event")
        if inner.cls != "GaussianDpEvent":
            raise InputError(
                inner.where,
                f"SampledWithoutReplacementDpEvent is certified for a sampled GaussianDpEvent only (WBK19 Thm 27), got {inner.cls}",
            )
        inner.check_fields(("noise_multiplier",))
        values["noise_multiplier"], notes["noise_multiplier"] = inner.number("noise_multiplier")
        return cls.make(values, notes, view.where)

    @property
    def gamma(self) -> fmpq:
        return self["sample_size"] / self["source_dataset_size"]

    def is_null(self) -> bool:
        return self["sample_size"] == 0

    def rdp(self, alpha, relation):
        sigma, gamma = self["noise_multiplier"], self.gamma
        if gamma == 1:
            return ball(alpha / (2 * sigma * sigma))
        a0 = int(alpha.p // alpha.q)
        if alpha.q == 1:
            return _log_A(a0, gamma, sigma) / ball(alpha - 1)
        t = alpha - a0  # chord of log A between a0 and a0 + 1 (convexity of the cumulant generating function)
        k = ball(1 - t) * _log_A(a0, gamma, sigma) + ball(t) * _log_A(a0 + 1, gamma, sigma)
        return k / ball(alpha - 1)

    def rdp_floats(self, alphas, relation):
        import numpy as np

        sigma, gamma = self["noise_multiplier"], self.gamma
        if gamma == 1:
            return alphas / (2 * float_of(sigma) ** 2)
        lows = np.floor(alphas).astype(int)
        needed = tuple(sorted({int(a) for a in lows} | {int(a) + 1 for a in lows}))
        K = _log_A_floats(int(gamma.p), int(gamma.q), int(sigma.p), int(sigma.q), needed)
        out = np.empty(len(alphas))
        for i, a in enumerate(alphas):
            a0 = int(np.floor(a))
            t = a - a0
            k = K[a0] if t == 0 else (1 - t) * K[a0] + t * K[a0 + 1]
            out[i] = k / (a - 1)
        return out

    def work_seconds(self, alpha: fmpq, prec: int) -> float:
        a = int(alpha.p // alpha.q) + 1
        per = 4e-6 * max(1.0, prec / 256) ** 1.5
        bits = max(prec, 128) + _extra_bits(self["noise_multiplier"])
        table = 3e-7 * (DIFF_MAX + 2) ** 2 * max(1.0, bits / 256) ** 1.5 if a <= DIFF_MAX + 1 else 0
        return 2 * a * per + table


@lru_cache(maxsize=256)
def _log_A_floats(gp: int, gq: int, sp: int, sq: int, needed: tuple) -> dict:
    """Float estimates of log A(a) for the integer orders ``needed`` (a choice only): from the balls at 64 bits up to
    DIFF_MAX, then the Thm 9 branch in log space (numpy)."""
    import numpy as np

    gamma, sigma = fmpq(gp, gq), fmpq(sp, sq)
    out = {}
    top = max(needed)
    lf = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, top + 1))))) if top > DIFF_MAX else None  # log k!
    lg, c = math.log(float_of(gamma)), 1 / (2 * float_of(sigma) ** 2)
    t2 = min(math.log(4) + 2 * c + math.log(-math.expm1(-2 * c)), math.log(2) + 2 * c)  # log(e^2c - 1) without overflow
    for a in needed:
        if a <= DIFF_MAX:
            with workprec(64):
                out[a] = float(_log_A(a, gamma, sigma).mid())
        else:
            j = np.arange(3, a + 1)
            terms = j * lg + (lf[a] - lf[j] - lf[a - j]) + math.log(2) + c * j * (j - 1)
            out[a] = float(np.logaddexp.reduce(np.concatenate(([0.0, 2 * lg + math.log(a * (a - 1) / 2) + t2], terms))))
    return out
