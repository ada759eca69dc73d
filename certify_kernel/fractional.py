"""The Rényi moment of the Poisson-subsampled Gaussian at a fractional order (MTZ19 Sec. 3.3), with an explicit remainder.

Mironov, Talwar, Zhang (2019), "Rényi Differential Privacy of the Sampled Gaussian Mechanism" (MTZ19), Sec. 3.3:

  (MTZ19 3.3)    A_alpha = E_{z ~ N(0, sigma^2)} [ g(z)^alpha ],  g(z) = 1 - q + q exp((2z - 1)/(2 sigma^2)),
                 eps_RDP(alpha) = log(A_alpha)/(alpha - 1)  (the remove order; it dominates the add order, MTZ19 Sec. 3);

  (MTZ19 3.3-II) split at z0 = sigma^2 log(1/q - 1) + 1/2 (where q e^u = 1 - q, u = (2z - 1)/(2 sigma^2)):
                 for z <= z0, g = (1-q)(1 + r) with r = exp((z - z0)/sigma^2) in (0, 1];
                 for z >= z0, g = q e^u (1 + 1/r), 1/r in (0, 1];
                 expand (1 + x)^alpha binomially and integrate term by term (two series with erfc terms).

MTZ19's binomial series converges only like k^(-alpha-2) where x = 1. The kernel writes instead (Euler's transformation) (1 + x)^alpha = 2^alpha (1 -
s)^alpha with s = (1 - x)/2 in [0, 1/2]:

  (R)  |(1 - s)^alpha - sum_{k<=K} C(alpha,k) (-s)^k| <= |C(alpha,K+1)| s^(K+1)/(1 - s) <= |C(alpha,K+1)| 2^-K
       for K + 1 > alpha (then |C(alpha,k+1)/C(alpha,k)| = |alpha - k|/(k + 1) < 1 for every k > K);
  (P)  sum_{k<=K} C(alpha,k) (-s)^k = sum_{j<=K} c_j x^j,  c_j = (-1)^j sum_{k=j..K} C(alpha,k) C(k,j) (-1/2)^k.

Each power integrates in closed form (completing the square, the erfc terms of MTZ19 3.3-II):

  (H)  int_{z<=z0} phi_sigma(z) r^j dz = H(j, +1),  int_{z>=z0} phi_sigma(z) (q e^u)^alpha r^-j dz = (1-q)^alpha H(alpha-j, -1),
       H(m, s) = psi M(t),  t = s (m - z0)/sigma,  psi = exp(-z0^2/(2 sigma^2))/sqrt(2 pi),  M = Q/phi (Mills ratio),
       psi sqrt(2 pi) exp(t^2/2) = E(m) = exp(m(m-1)/(2 sigma^2)) (q/(1-q))^m,  so H = E(m) Q(t), and for t < 0
       H = E(m) - psi M(-t) (Q(t) = 1 - Q(-t)).

  (A)  A_alpha = (2(1-q))^alpha [ sum_{j<=K} c_j (H(j, +1) + H(alpha-j, -1))  +-  |C(alpha,K+1)| 2^-K (H(0, +1) + H(alpha, -1)) ].

At an integer alpha = n, c_j = C(n,j) 2^-n, the remainder is 0 and (A) is the sum of MTZ19 3.3-I (H(j,+1) + H(j,-1) = E(j)). Q(t) for |t| <= 8: (1
-+ erf(|t|/sqrt 2))/2 by the all-positive series (numbers.normal_tail); beyond: Laplace's continued fraction for the Mills ratio (DLMF 7.9.2),
enclosed by evaluating it backward from an interval tail (``mills``)."""

import math
from fractions import Fraction
from mpmath import iv
from .numbers import Undecided, interval, iv_max, normal_tail, working_precision

#: most terms K of (P) (the work grows like K^2 plus 2K Gaussian tails); beyond: cannot decide
MAX_TERMS = 1500

def mills(t):
    """M(t) = Q(t)/phi(t) for an interval t > 0 by Laplace's continued fraction (DLMF 7.9.2 at z = t/sqrt 2):
    M = 1/(t + w_1), w_i = i/(t + w_(i+1)), every w_i > 0. Each map w -> i/(t + w) is monotone, so the true w_n lies
    in [0, n/t] and evaluating backward from that interval encloses M; n doubles until the width is below 2^(16-prec)."""
    n, tol = int((0.6 * iv.prec / float(t.a)) ** 2) + 16, iv.mpf(2) ** (16 - iv.prec)  # t itself is 2^-prec wide
    while n <= 1 << 16:
        w = iv.mpf([0, (n / t).b])
        for i in range(n, 0, -1):
            w = i / (t + w)
        m = 1 / (t + w)
        if m.delta <= m.a * tol:
            return m
        n *= 2
    raise Undecided("the continued fraction of the Gaussian tail converges too slowly here")

class _Split:
    """The constants of (MTZ19 3.3-II) and (H) for one (q, sigma): c = 1/(2 sigma^2), L = log((1-q)/q), z0, psi; L, z0 and psi recomputed at
    each working precision (an erfc argument must carry the extra bits its cancellation 1 - erf needs)."""
    def __init__(self, q: Fraction, sigma: Fraction):
        self.q, self.sigma, self.c = q, sigma, Fraction(1) / (2 * sigma * sigma)
        self._at: dict = {}
        #: beyond |t| = T the continued fraction (about (0.6 prec/t)^2 terms), below it the erf series
        self.T = 8
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
            return psi * mills(t)
        if t.b < -self.T:
            return self.E(m) - psi * mills(-t)
        with working_precision(iv.prec + 40):  # Q by numbers.normal_tail, which adds the bits 1 - erf cancels
            return self.E(m) * normal_tail((interval(m) - self.consts()[1]) / interval(self.sigma) * sign)

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
    """(c_0..c_K of (P), |C(alpha,K+1)|) as intervals, in O(K) operations.
    C(alpha,k) C(k,j) = C(alpha,j) C(alpha-j,k-j) gives c_j = 2^-j C(alpha,j) T_j with T_j = sum_{i<=K-j} C(alpha-j,i) (-1/2)^i; Pascal's rule
    C(b,i) = C(b-1,i) + C(b-1,i-1) gives T_j = T_(j+1)/2 + D_j (-1/2)^(K-j), D_j = C(alpha-j-1, K-j), with T_K = 1, D_K = 1 and D_j =
    (alpha-j-1)/(K-j) D_(j+1) (a backward recurrence that halves its errors); b_k = C(alpha,k) by C(alpha,k+1) = C(alpha,k) (alpha-k)/(k+1)."""
    a, T, D, c, b = interval(alpha), iv.mpf(1), iv.mpf(1), [None] * (K + 1), [iv.mpf(1)]
    for k in range(K + 1):
        b.append(b[-1] * (a - k) / (k + 1))
    c[K] = b[K] * iv.mpf(2) ** (-K)
    for j in range(K - 1, -1, -1):
        D = D * (a - j - 1) / (K - j)
        T = T / 2 + D * (iv.mpf(-0.5) ** (K - j))
        c[j] = b[j] * iv.mpf(2) ** (-j) * T
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
    return iv.log(iv_max(moment(alpha, q, sigma, bits), 1))

def accuracy_bits(alpha: Fraction, q: Fraction, sigma: Fraction, precision: int) -> int:
    """Bits of absolute accuracy on A_alpha for about 2^-(precision+24) relative accuracy on K = log A_alpha; A_alpha - 1 is estimated (it only
    sets the work, never a bound) by alpha(alpha-1)/2 (A_2 - 1), A_2 - 1 = q^2 (exp(1/sigma^2) - 1) (MTZ19 3.3-I at n = 2)."""
    x = 1 / max(float(sigma), 1e-150) ** 2
    log2_chi = 2 * math.log2(max(float(q), 1e-300)) + (x / math.log(2) if x > 50 else math.log2(math.expm1(x)))
    estimate = math.log2(float(alpha * (alpha - 1)) / 2) + log2_chi
    return precision + 24 + max(0, math.ceil(-estimate))
