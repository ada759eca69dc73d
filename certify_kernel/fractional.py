"""The Rényi moment of the Poisson-subsampled Gaussian at a fractional order (MTZ19 Sec. 3.3), with an explicit remainder.

Mironov, Talwar, Zhang (2019), "Rényi Differential Privacy of the Sampled Gaussian Mechanism" (MTZ19), Sec. 3.3:

  (MTZ19 3.3)    A_alpha = E_{z ~ N(0, sigma^2)} [ g(z)^alpha ],  g(z) = 1 - q + q exp((2z - 1)/(2 sigma^2)),
                 eps_RDP(alpha) = log(A_alpha)/(alpha - 1)  (the remove order; it dominates the add order, MTZ19 Sec. 3);

  (MTZ19 3.3-II) split at z0 = sigma^2 log(1/q - 1) + 1/2 (where q e^u = 1 - q, u = (2z - 1)/(2 sigma^2)):
                 for z <= z0, g = (1-q)(1 + r) with r = exp((z - z0)/sigma^2) in (0, 1];
                 for z >= z0, g = q e^u (1 + 1/r), 1/r in (0, 1];
                 expand (1 + x)^alpha binomially and integrate term by term (two series with erfc terms).

MTZ19's binomial series converges only like k^(-alpha-2) where x = 1. The kernel writes instead (Euler's
transformation) (1 + x)^alpha = 2^alpha (1 - s)^alpha with s = (1 - x)/2 in [0, 1/2]:

  (R)  |(1 - s)^alpha - sum_{k<=K} C(alpha,k) (-s)^k| <= |C(alpha,K+1)| s^(K+1)/(1 - s) <= |C(alpha,K+1)| 2^-K
       for K + 1 > alpha (then |C(alpha,k+1)/C(alpha,k)| = |alpha - k|/(k + 1) < 1 for every k > K);
  (P)  sum_{k<=K} C(alpha,k) (-s)^k = sum_{j<=K} c_j x^j,  c_j = (-1)^j sum_{k=j..K} C(alpha,k) C(k,j) (-1/2)^k.

Each power integrates in closed form (completing the square, the erfc terms of MTZ19 3.3-II):

  (H)  int_{z<=z0} phi_sigma(z) r^j dz = H(j, +1),  int_{z>=z0} phi_sigma(z) (q e^u)^alpha r^-j dz = (1-q)^alpha H(alpha-j, -1),
       H(m, s) = psi M(t),  t = s (m - z0)/sigma,  psi = exp(-z0^2/(2 sigma^2))/sqrt(2 pi),  M = Q/phi (Mills ratio),
       psi sqrt(2 pi) exp(t^2/2) = E(m) = exp(m(m-1)/(2 sigma^2)) (q/(1-q))^m,  so H = E(m) Q(t), and for t < 0
       H = E(m) - psi M(-t) (Q(t) = 1 - Q(-t)).

  (A)  A_alpha = (2(1-q))^alpha [ sum_{j<=K} c_j (H(j, +1) + H(alpha-j, -1))  +-  |C(alpha,K+1)| 2^-K (H(0, +1) + H(alpha, -1)) ].

At an integer alpha = n, c_j = C(n,j) 2^-n, the remainder is 0 and (A) is the sum of MTZ19 3.3-I (H(j,+1) + H(j,-1) = E(j)).
Q(t) for |t| <= T: (1 -+ erf(|t|/sqrt 2))/2 by the all-positive series (numbers.erf_interval); beyond T: the asymptotic
series (DLMF 7.12.1) M(t) = (1/t) sum_{i<N} (-1)^i (2i-1)!!/t^(2i), whose remainder is bounded in magnitude by the
first neglected term (DLMF 7.12(i), real argument), T chosen so that the smallest term is below the working precision.
"""

from __future__ import annotations

import math
from fractions import Fraction

from mpmath import iv

from .numbers import Undecided, erf_interval, interval, working_precision

#: most terms K of (P) (the work grows like K^2 plus 2K Gaussian tails); beyond: cannot decide
MAX_TERMS = 1500


def _mills_asymptotic(t):
    """M(t) = Q(t)/phi(t) for an interval t > 0 by DLMF 7.12.1, the remainder bounded by the first neglected term (7.12(i))."""
    inv = 1 / (t * t)
    total, term, i, tol = iv.mpf(0), iv.mpf(1), 0, iv.mpf(2) ** (-iv.prec - 8)
    while True:
        total = total + term
        nxt = -term * (2 * i + 1) * inv
        i += 1
        if abs(nxt).b <= total.a * tol:
            break
        if (2 * i + 1) * inv.b >= 1:
            raise Undecided("the asymptotic series of the Gaussian tail is used below its range")
        term = nxt
    bound = abs(nxt).b
    return (total + iv.mpf([-bound, bound])) / t


class _Split:
    """The constants of (MTZ19 3.3-II) and (H) for one (q, sigma): c = 1/(2 sigma^2), L = log((1-q)/q), z0, psi.

    L, z0 and psi are recomputed at each working precision (an erfc argument must carry the extra bits its
    cancellation 1 - erf needs, not only the arithmetic after it).
    """

    def __init__(self, q: Fraction, sigma: Fraction):
        self.q, self.sigma, self.c = q, sigma, Fraction(1) / (2 * sigma * sigma)
        self._at: dict = {}
        #: beyond |t| = T the asymptotic series reaches 2^-prec: its smallest term is about exp(-t^2/2)
        self.T = math.sqrt(2 * math.log(2) * (iv.prec + 16)) + 2

    def consts(self):
        """(L, z0, psi) at the current working precision."""
        if iv.prec not in self._at:
            L = iv.log(interval((1 - self.q) / self.q))
            z0 = interval(self.sigma * self.sigma) * L + iv.mpf(0.5)
            self._at[iv.prec] = (L, z0, iv.exp(-z0 * z0 * interval(self.c)) / iv.sqrt(2 * iv.pi))
        return self._at[iv.prec]

    def E(self, m: Fraction):
        """E(m) = exp(m(m-1)/(2 sigma^2) - m L) of (H)."""
        return iv.exp(interval(m * (m - 1) * self.c) - interval(m) * self.consts()[0])

    def H(self, m: Fraction, sign: int):
        """H(m, sign) = psi M(sign (m - z0)/sigma) of (H)."""
        _, z0, psi = self.consts()
        t = (interval(m) - z0) / interval(self.sigma) * sign
        if t.a > self.T:
            return psi * _mills_asymptotic(t)
        if t.b < -self.T:
            return self.E(m) - psi * _mills_asymptotic(-t)
        if t.a < 0 < t.b:
            raise Undecided("a Gaussian tail argument straddles 0")
        x2 = float(t.b if t.a >= 0 else -t.a) ** 2
        with working_precision(iv.prec + int(0.75 * x2) + 40):
            t = (interval(m) - self.consts()[1]) / interval(self.sigma) * sign
            erf = erf_interval(abs(t) / iv.sqrt(2))
            tail = (1 - erf) / 2 if t.a >= 0 else (1 + erf) / 2
            return self.E(m) * tail


def _binomials(alpha: Fraction, n: int) -> list:
    """C(alpha, k) for k = 0..n as intervals (C(alpha,k+1) = C(alpha,k) (alpha-k)/(k+1))."""
    out, a = [iv.mpf(1)], interval(alpha)
    for k in range(n):
        out.append(out[-1] * (a - k) / (k + 1))
    return out


def terms_needed(alpha: Fraction, bits: int) -> int:
    """The smallest K >= floor(alpha) + 1 with |C(alpha,K+1)| 2^(alpha+1-K) <= 2^-bits (remainder (R) relative to A >= 1)."""
    K, log_c = math.floor(alpha) + 1, 0.0
    a = float(alpha)
    for k in range(K + 1):  # log2 |C(alpha, K+1)|
        log_c += math.log2(max(abs(a - k), 1e-300) / (k + 1))
    while log_c + a + 1 - K > -bits:
        log_c += math.log2(abs(a - K - 1) / (K + 2))
        K += 1
        if K > MAX_TERMS:
            raise Undecided(f"the fractional order alpha = {alpha} needs more than {MAX_TERMS} terms of (P)")
    return K


def coefficients(alpha: Fraction, K: int) -> tuple[list, object]:
    """(c_0..c_K of (P), |C(alpha,K+1)|) as intervals."""
    b = _binomials(alpha, K + 1)
    half, c = iv.mpf(0.5), []
    scaled = [b[k] * (-half) ** k for k in range(K + 1)]  # C(alpha,k) (-1/2)^k
    for j in range(K + 1):
        total, binom = iv.mpf(0), 1
        for k in range(j, K + 1):
            total = total + scaled[k] * binom
            binom = binom * (k + 1) // (k + 1 - j)  # C(k+1, j) from C(k, j)
        c.append(total if j % 2 == 0 else -total)
    return c, abs(b[K + 1])


def moment(alpha: Fraction, q: Fraction, sigma: Fraction, bits: int):
    """A_alpha of (MTZ19 3.3) by (A), for a fractional alpha > 1 and 0 < q < 1, with absolute error about 2^-bits A."""
    K = terms_needed(alpha, bits)
    with working_precision(bits + 2 * math.ceil(alpha) + 64):
        c, rest = coefficients(alpha, K)
        sp = _Split(q, sigma)
        total = iv.mpf(0)
        for j in range(K + 1):
            total = total + c[j] * (sp.H(Fraction(j), 1) + sp.H(alpha - j, -1))
        rem = (rest * iv.mpf(2) ** (-K) * (sp.H(Fraction(0), 1) + sp.H(alpha, -1))).b
        scale = iv.exp(interval(alpha) * iv.log(interval(2 * (1 - q))))
        return scale * (total + iv.mpf([-rem, rem]))


def log_A(alpha: Fraction, q: Fraction, sigma: Fraction, bits: int):
    """K(alpha) = log A_alpha (an interval; A_alpha >= 1 for alpha > 1, so it is >= 0)."""
    A = moment(alpha, q, sigma, bits)
    return iv.log(iv.mpf([max(A.a, 1), max(A.b, 1)]))


def accuracy_bits(alpha: Fraction, q: Fraction, sigma: Fraction, precision: int) -> int:
    """Bits of absolute accuracy on A_alpha for about 2^-(precision+24) relative accuracy on K = log A_alpha.

    A_alpha - 1 is estimated (it only sets the work, never a bound) by alpha(alpha-1)/2 (A_2 - 1), with
    A_2 - 1 = q^2 (exp(1/sigma^2) - 1) (MTZ19 3.3-I at n = 2).
    """
    x = 1 / max(float(sigma), 1e-150) ** 2
    log2_chi = 2 * math.log2(max(float(q), 1e-300)) + (x / math.log(2) if x > 50 else math.log2(math.expm1(x)))
    estimate = math.log2(float(alpha * (alpha - 1)) / 2) + log2_chi
    return precision + 24 + max(0, math.ceil(-estimate))
