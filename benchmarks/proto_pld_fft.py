"""Research prototype (issue 24, first lever): the T-fold PLD by ONE tilted float FFT with a proven a-priori
error bound, read off as a certified (remove-direction) bracket [eps_low, eps_up] for a target delta.

Not a product: nothing in certify/ uses this file. It answers, with numbers, whether a certified bound of
the "float FFT + published round-off analysis" kind is tight enough and fast enough against dp_accounting.

Notation. u = 2^-53 (binary64, round to nearest); gamma_n = n u / (1 - n u) (Higham, Accuracy and Stability of
Numerical Algorithms, 2nd ed. (2002), Sec. 3.1). Standard model (Higham (2.4)): fl(a op b) = (a op b)(1 + d),
|d| <= u, for op in + - * / on reals, barring underflow; with gradual underflow (Higham (2.8))
fl(a op b) = (a op b)(1 + d) + e, |e| <= 2^-1075, d e = 0, and + - are exact on subnormals.
Complex multiplication by the usual formula (or with an FMA in either component, numpy's loops may use one):
each component has error <= gamma_2 (|ac| + |bd|) resp. gamma_2 (|ad| + |bc|), so |fl(xy) - xy| <= sqrt(2)
gamma_2 |x||y| (Higham Lemma 3.5; with an FMA: fma(a, c, -fl(bd)) = (ac - bd(1 + d1))(1 + d2), the same
component bound). Complex + and -: |fl(x +- y) - (x +- y)| <= u |x +- y| (componentwise u).

0. Input. certify's own one-step measures of the remove direction of Poisson add/remove
   (certify.pld.accountant.plan with the target T, run with steps = 1): integers m_i (i = 0..n-1) at losses
   l_i = (o + i) h, units 2^-K, plus m_inf at +inf; a pessimistic one (its curve bounds the one-step curve from
   above) and an optimistic one (from below). By certify's composition argument (certify/pld/compose.py, Zhu,
   Dong, Wang "Optimal accounting of differential privacy via characteristic function", AISTATS 2022, Thm 10)
   the EXACT T-fold product of the pessimistic (optimistic) measure has a curve above (below) the true T-fold
   curve, and delta(eps) = m_inf + sum_k c_k (1 - e^(eps - L_k))_+ is non-decreasing in every c_k, in m_inf
   and in every L_k (certify/pld/readoff.py). So it suffices to bound the T-fold masses c_k from above
   (pessimistic measure) resp. below (optimistic measure), coefficient by coefficient.

1. Tilt. For a float lambda > 0 (a choice; any value is sound): w_i = m_i 2^-K e^(lambda l_i). Then
   (w^(*T))_k = e^(lambda L_k) (m^(*T))_k exactly, L_k = (T o + k) h. The w_i are balls (python-flint arb,
   200 bits); Z0 = a binary64 number near sum w_i; x_i = the binary64 number nearest to the ball w_i / Z0's
   midpoint; rho = max_i |w_i / Z0 - x_i| / x_i decided in balls (m_i = 0 gives x_i = 0 exactly). Then, all
   entries being >= 0, (1 - rho)^T (x^(*T))_k <= ((w / Z0)^(*T))_k <= (1 + rho)^T (x^(*T))_k, and
   c_k = ((w / Z0)^(*T))_k Z0^T e^(-lambda L_k). The vector x (exact floats) is what is convolved.
   lambda is chosen (floats) at the saddle point of delta: T (K(lambda) - lambda K'(lambda)) = log delta with K
   the one-step cumulant generating function of the losses; then T K'(lambda) ~ eps(delta), and the tilted
   T-fold law has its bulk there (its mean T K'(lambda), its variance T K''(lambda)).

2. Window and wrap-around. The transform has length N = 2^t >= n; x is zero-padded. The float pipeline
   computes the cyclic convolution y*_p = sum_(k = p mod N) (x^(*T))_k. The window is the N consecutive
   indices [a, a + N) centred on the tilted mean; for k in it, y*_(k mod N) = (x^(*T))_k + alias_k with
   0 <= alias_k <= A := (mass of x^(*T) below a) + (mass above a + N - 1). Chernoff (exact MGF of x, balls):
   mass at >= b <= G(s)^T e^(-s b), mass at <= a <= G(-s)^T e^(s a), G(s) = sum_i x_i e^(s i), any s > 0 (s
   chosen by a float search).

3. Forward transform (own iterative radix-2 decimation-in-time Cooley-Tukey: bit-reversal, then t stages of
   butterflies (a, b) -> (a + w b, a - w b)), applied to z = x_pess + i x_opt (both real measures in one
   complex transform). Higham Thm 24.2: if the computed twiddles satisfy |w_hat - w| <= mu, then
   ||Z_hat - Z||_2 <= theta ||Z||_2, theta = t eta / (1 - t eta), eta = mu + gamma_4 (sqrt 2 + mu).
   ||Z||_2 = sqrt(N) ||z||_2 (Parseval). Twiddles: w_N^j = e^(-2 pi i j / N), j < N/2, from
   arb.sin_cos_pi_fmpq at 200 bits for j <= N/8 (the rest by exact swaps and sign changes), each component the binary64
   number nearest to the ball's midpoint (Python's int -> float is correctly rounded), so
   mu <= u + 2 r (r the largest ball radius, checked). Stage s uses w_(2^s)^j = w_N^(j N / 2^s): the same numbers.
   Separation: X_p[j] = (Z_j + conj Z_(-j)) / 2, X_o[j] = (Z_j - conj Z_(-j)) / (2i); the map is linear with
   2-norm <= 1, the computed one adds one rounding per component (relative u): with e_F = theta sqrt(N) ||z||_2,
   ||X_hat_p - X_p||_2 <= e_F + u (sqrt(N) ||x_p||_2 + e_F) =: e_1 (the same for o).
   (The computed X_hat_p is exactly Hermitian: fl commutes with conjugation, so only j <= N/2 is powered.)

4. Pointwise T-th power by binary powering. (a) exact vs perturbed input: |a^T - b^T| <= T |a - b|
   max(|a|, |b|)^(T-1); |X_j| <= sum x =: S and |X_hat_j| <= S + e_1 =: B, so ||X_hat^T - X^T||_2 <= T B^(T-1) e_1.
   (b) rounding: a computed power built from k factors by m = k - 1 complex products carries relative error
   |prod (1 + d)| - 1 with m factors |d| <= nu = sqrt 2 gamma_2 (induction: combining powers k1, k2 gives
   (k1 - 1) + (k2 - 1) + 1 factors), so |P_hat_j - X_hat_j^T| <= ((1 + nu)^(T-1) - 1) |X_hat_j|^T, and
   ||X_hat^T||_2 <= B^(T-1) ||X_hat||_2 <= B^(T-1) (sqrt(N) ||x||_2 + e_1).
   (c) underflow of the power (|X_hat_j|^T is often below 2^-1022): at most 2 log2 T + 2 products per entry,
   each adding <= sqrt 2 * 2^-1074 absolutely, propagated through later products by factors <= 2 B^T <= 4
   (a squaring doubles an absolute error), so <= 4^64 2^-1072 per entry: U_pow = sqrt(N) 2^-944 in 2-norm.
4'. Refinement (default). The bound (a) is dominated by the few low frequencies where |X_j|^T ~ 1 (the
   2-norm bound of step 3 may sit entirely there). With thr = 2^-10 and r = thr^(1/(T-1)) - e_1 (balls), every
   j <= N/2 whose float fl(fl(Re^2) + fl(Im^2)) exceeds cut = a float <= r^2 (1 - u)^3 is recomputed in balls:
   X_j = sum_i x_i e^(-2 pi i ij/N) (acb_poly evaluated at acb.exp_pi_i, 200 bits), P_j = X_j^T, and P_hat_j :=
   the nearest floats (mirrored to N - j), with |P_hat_j - X_j^T| decided in balls. For every other j,
   |X_hat_j| <= r (as fl(a^2 + b^2) <= cut implies a^2 + b^2 <= cut (1 - u)^-2 <= r^2), so
   (|X_hat_j| + e_j)^(T-1) <= thr and, over those j, ||X_hat^T - X^T||_2 <= T thr e_1 (Cauchy-Schwarz on
   sum_j e_j^2 <= e_1^2), ||P_hat - X_hat^T||_2 <= ((1 + nu)^(T-1) - 1) thr ||X_hat||_2. min(thr, B^(T-1))
   replaces B^(T-1) throughout; the plain bound is kept (``refine=False``) for comparison. This lowered E by
   about 1000x at T = 1e6 (3.5e-9 -> 3.4e-12) for 12 + 12 frequencies j <= N/2 in balls (0.05 s).
   Combination W = P_hat_p + i P_hat_o: one rounding per component, ||W_hat - W||_2 <= u (||P_hat_p||_2 + ||P_hat_o||_2);
   every ||.||_2 of a float vector is bounded from the floats: sum of fl squares, any order (Higham (4.4)), in balls.

5. Inverse transform y = conj(F conj(W_hat)) / N (conjugations and the 1/N exact; 1/N applied in balls), again
   Thm 24.2: ||F conj W_hat computed - F conj W_hat||_2 <= theta sqrt(N) ||W_hat||_2. The exact target is
   F^-1 (X_p^T + i X_o^T) = y*_p + i y*_o (real cyclic convolutions). Every coefficient of a vector is bounded
   by its 2-norm and ||F v||_2 = sqrt(N) ||v||_2, so for every p:
   |Re y_hat_p - y*_p,p|, |Im y_hat_p - y*_o,p| <= E := (D_p + D_o + D_W + theta ||W_hat||_2) / sqrt(N) + U_fft / N,
   D_side = T b e_1 + ((1 + nu)^(T-1) - 1) b (sqrt(N) ||x||_2 + e_1) + (refined frequencies' error) + U_pow,
   b = min(thr, B^(T-1)) (refined) or B^(T-1) (plain), D_W the combination rounding; U_fft covers underflow inside
   the transforms and the halvings of step 3 (t stages, each <= sqrt(2N) 2^-1073 in 2-norm, amplified by sqrt(2)
   per later stage: <= t N 2^-1071 in 2-norm), and the same for the forward transform inside e_F.

6. Coefficient bounds (k in the window, p = k mod N): (x^(*T))_k <= y*_p <= Re y_hat_p + E (alias only adds,
   so the pessimistic upper bound needs no A) and (x^(*T))_k >= y*_p - A >= Re y_hat_p - E - A, clipped at 0.
   Untilted: c_k <= (1 + rho)^T (y_hat_p + E) Z0^T e^(-lambda L_k), c_k >= (1 - rho)^T max(0, y_hat_p - E - A)
   Z0^T e^(-lambda L_k). N is the smallest power of two >= n whose float Chernoff estimate of A is <= 1e-16
   (a choice); the window [a, a + N) is centred on the tilted mean.

7. Read-off (remove direction), over the read-off range [j0, j1) of window positions: j0 = 8 tilted standard
   deviations below the tilted mean (eps is only searched above L_(a+j0)), j1 = where the weights
   e^(-(lambda + 1) h j) would leave the normal range (or N). Pessimistic: delta_up(eps) = (M^T - F^T) [the +inf
   mass of the T-fold product of a measure with finite mass F and total M, exact in balls] + U_above [Chernoff on
   the untilted pessimistic measure, mass at losses >= L_(a+j1), sent to +inf] + sum_(j0 <= j < j1, L_k > eps)
   c_k^up (1 - e^(eps - L_k)); the mass below L_(a+j0) is moved up to L_(a+j0), which adds nothing as long as
   L_(a+j0) <= eps (checked). Optimistic: the lower masses of the read-off range only (dropping mass lowers delta).
   The range's sum is sum_(k >= k0) c_k (1 - e^(eps - L_k)) = C e^(-lambda L_(a+j0)) (S1 - e^(eps - L_(a+j0)) S2),
   S1 = sum U_j r1^j, S2 = sum U_j r2^j (j from j0), r1 = e^(-lambda h), r2 = e^(-(lambda + 1) h): the powers of
   float r1_hat, r2_hat by binary doubling (g[m + i] = fl(g[i] fl(r^m)): at most j roundings for g_j), the
   products with U_k and the suffix sums (np.cumsum, recursive summation) of non-negative terms; every
   computed quantity is within [(1 - u)^m, (1 - u)^-m] of its exact value for m <= 2N + 2 roundings (Higham
   (3.4), (4.3)-(4.4)), and r_hat^j is within (1 +- rho_r)^N of r^j (rho_r decided in balls). The subtraction
   and all constants are done in balls. eps(delta) by bisection over dyadic eps (resolution 2^-30; a search:
   each end is decided at its point: eps_up with upper(delta_up) <= delta, eps_low with lower(delta_low) > delta;
   the true curve is non-increasing in eps).

Measured (2026-12-03, this 2-core machine at load average about 1, one process, q = 0.01, sigma = 2,
delta = 1e-6, grid 1e-4, Poisson add/remove; two runs; seconds wall; "FFT" includes certify's one-step sampling
and the twiddle table, computed afresh per T; "warm" = without the table, an N-only constant a product would cache):

| T | FFT bracket (remove) | certify exact (remove) | FFT s (warm) | dp_acc pess + opt s | FFT / dp_acc | certify s | E (plain bound) |
|---|---|---|---|---|---|---|---|
| 1e4 | [2.446578, 2.446810] | [2.446578, 2.446811] | 0.39, 0.39 (0.32) | 0.25, 0.25 | 1.6x (1.3x warm) | 0.69 | 2.9e-14 (2.9e-11) |
| 1e5 | [8.984214, 8.985158] | [8.984214, 8.985158] | 0.69, 0.78 (0.41) | 0.45, 0.40 | 1.6-2.0x (1.0x) | 2.6-3.0 | 3.2e-13 (3.3e-10) |
| 1e6 | [38.806716, 38.811489] | [38.806717, 38.812499] | 1.67, 1.66 (1.0) | 1.09, 0.96 | 1.5-1.7x (1.0x) | 10.2-11.6 | 3.4e-12 (3.5e-9) |

With the plain bound (--plain) the brackets widen to [8.984208, 8.985163] at 1e5 and [38.806161, 38.812044] at 1e6.
dp_accounting composes both directions; this prototype one (the add direction would add a third real vector).

A finding on certify's exact chain (measured with this file, T = 1e6): the FFT's eps_up (38.811489) is 1.0e-3
BELOW certify's exact-composition eps_up (38.812499), with the same one-step measures. The cause is certify's
truncation, not this method: the pessimistic chain's +inf mass at T = 1e6 is 1095617180515 * 2^-70 = 9.3e-10
(0.09% of delta), because the top mass moved to +inf (<= tau = delta 2^-30 per product) is carried and doubled
by every later squaring, so the total is about T tau = T delta 2^-30, not (number of products) tau. The FFT
computes the untruncated T-fold product (its +inf mass: 1.7e-15).

What a production version would still have to prove (assumed here, stated plainly):
 * that numpy's elementwise float64 ufuncs (add, subtract, multiply, complex multiply, and their in-place
   forms) round each operation to nearest as the standard model says (no extended precision, no flush-to-zero /
   denormals-are-zero mode; an FMA is covered, see above), and that np.sum / np.cumsum add the given terms
   (any order is covered by (4.4));
 * Higham Thm 24.2's model matches this code's butterflies exactly (DIT, bit reversal first, twiddle w_(2^s)^j
   per stage) - checked here by reading, not by a proof assistant; its underflow-free hypothesis is replaced by the
   crude additive terms U_fft and U_pow, whose derivation above is a sketch;
 * the remove direction only: the add direction (certify derives it by H_g(Q||P) = 1 - g + g H_(1/g)(P||Q),
   certify/pld/readoff.py) reads the remove measure at -eps, i.e. at losses far below the bulk that a
   positive tilt centres near +eps: it needs a second tilt (lambda' < 0, centred at -eps; one more real
   vector, i.e. a second complex transform pair or a packing of three real vectors), plus the Q-mass
   sum_k c_k e^(-L_k) of that window and the excess mass g (M - 1) of the pessimistic measure, both available
   the same way; the lower bound needs only one direction (certify's choice);
 * the float choices (lambda, N, window, Chernoff s, the refinement threshold) are free: soundness never depends
   on them, only the tightness; a certificate would record them and a checker would redo the float pipeline bit
   for bit (a reproducible FFT: this one is pure numpy in a fixed order) or re-derive the bound.

Run: python benchmarks/proto_pld_fft.py --steps 10000,100000,1000000 [--no-certify] [--no-dp]
"""

from __future__ import annotations

import argparse
import math
import time
from functools import lru_cache

import numpy as np
from flint import arb, fmpq

from certify.balls import exact, workprec

PREC = 200
U = 2.0**-53


# ------------------------------------------------------------------------------------------------
# balls <-> floats
# ------------------------------------------------------------------------------------------------
def nearest(x: arb) -> float:
    """The binary64 number nearest to the ball's midpoint (round half to even; CPython's int -> float is correctly rounded)."""
    man, e = x.mid().man_exp()
    return math.ldexp(float(int(man)), int(e))


def f_up(x: arb) -> float:
    """A binary64 number >= every point of the ball."""
    hi = x.upper()
    f = nearest(hi)
    while arb(f) < hi:
        f = math.nextafter(f, math.inf)
    return f


def gamma(n: int) -> fmpq:
    """gamma_n = n u / (1 - n u) as an exact rational."""
    uu = fmpq(1, 2**53)
    return n * uu / (1 - n * uu)


# ------------------------------------------------------------------------------------------------
# The FFT (own radix-2 DIT Cooley-Tukey, Higham Sec. 24.1)
# ------------------------------------------------------------------------------------------------
@lru_cache(maxsize=4)
def twiddles(N: int) -> tuple[np.ndarray, arb]:
    """(w, mu): w[j] = binary64 rounding of e^(-2 pi i j / N), j < N/2, and a ball mu >= max_j |w[j] - exact|."""
    q, o = N // 4, N // 8
    c = np.empty(q + 1)
    s = np.empty(q + 1)
    rmax = arb(2) ** -150
    with workprec(PREC):
        for j in range(o + 1):
            sj, cj = arb.sin_cos_pi_fmpq(fmpq(2 * j, N))
            c[j] = nearest(cj)
            s[j] = nearest(sj)
            if not (cj.rad() < rmax and sj.rad() < rmax):
                raise ValueError("twiddle ball too wide")
        mu = arb(fmpq(1, 2**53)) + 2 * rmax
    # j in (N/8, N/4]: cos(2 pi j/N) = sin(2 pi (N/4 - j)/N) and back (exact swaps of the same rounded numbers)
    jj = np.arange(o + 1, q + 1)
    c[o + 1 :], s[o + 1 :] = s[q - jj], c[q - jj]
    w = np.empty(N // 2, dtype=np.complex128)
    # j in [0, N/4]: cos(2 pi j/N) - i sin(2 pi j/N); j = N/4 + m: cos = -sin(2 pi m/N), sin = cos(2 pi m/N)
    w[: q + 1 if q + 1 <= N // 2 else N // 2] = (c - 1j * s)[: min(q + 1, N // 2)]
    if N >= 4:
        m = np.arange(1, q)
        w[q + 1 :] = -s[m] - 1j * c[m]
    return w, mu


@lru_cache(maxsize=4)
def bitrev(N: int) -> np.ndarray:
    t = N.bit_length() - 1
    r = np.zeros(N, dtype=np.int64)
    for b in range(t):
        r |= ((np.arange(N) >> b) & 1) << (t - 1 - b)
    return r


def fft(z: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Unnormalised DFT y_k = sum_j z_j e^(-2 pi i jk/N) by iterative radix-2 decimation in time."""
    N = z.shape[0]
    a = z[bitrev(N)].astype(np.complex128)
    m = 1
    while m < N:
        tw = w[:: N // (2 * m)][:m]  # w_(2m)^j = w_N^(j N/(2m)), j < m
        b = a.reshape(-1, 2 * m)
        t = b[:, m:] * tw
        np.subtract(b[:, :m], t, out=b[:, m:])  # the same roundings as a + t, a - t written anew
        b[:, :m] += t
        m *= 2
    return a.reshape(N)


def power(x: np.ndarray, T: int) -> np.ndarray:
    """x^T elementwise by binary powering (squarings a * a, and products)."""
    result = None
    base = x
    while True:
        if T & 1:
            result = base.copy() if result is None else result * base
        T >>= 1
        if not T:
            return result
        base = base * base


def hermitian_power(X: np.ndarray, T: int) -> np.ndarray:
    """X^T for an exactly Hermitian X (X[-j] = conj X[j]): only j <= N/2 powered, the rest mirrored (fl commutes with conj)."""
    N = X.shape[0]
    half = power(X[: N // 2 + 1], T)
    out = np.empty(N, dtype=np.complex128)
    out[: N // 2 + 1] = half
    out[N // 2 + 1 :] = np.conj(half[1 : N // 2][::-1])
    return out


def fft_theta(N: int, mu: arb) -> arb:
    """Higham Thm 24.2: theta = t eta / (1 - t eta), eta = mu + gamma_4 (sqrt 2 + mu)."""
    t = N.bit_length() - 1
    eta = mu + arb(gamma(4)) * (arb(2).sqrt() + mu)
    return t * eta / (1 - t * eta)


def norm2_upper(v: np.ndarray) -> arb:
    """Ball >= ||v||_2 from the floats: fl of the squares (one rounding each, or an underflow <= 2^-1074) summed in
    any order (Higham (4.4): at most m - 1 further roundings), m = the number of real components."""
    a = np.concatenate((v.real, v.imag)) if np.iscomplexobj(v) else np.asarray(v, dtype=float)
    m = a.size + 2
    s = float(np.sum(a * a))
    with workprec(PREC):
        uu = arb(fmpq(1, 2**53))
        return (arb(s) / (1 - uu) ** (m + 1) + m * arb(2) ** -1070).sqrt()


#: the refinement's threshold: frequencies with (|X_hat_j| + e)^(T-1) above it are recomputed in balls
REFINE_THRESHOLD = fmpq(1, 2**10)
MAX_REFINED = 20000


def _refine(Xh: np.ndarray, x: np.ndarray, T: int, N: int, e1: arb, Ph: np.ndarray) -> tuple[arb, int]:
    """Recompute in balls (acb, exact DFT of the float input, then the T-th power) the frequencies j <= N/2 whose
    float |X_hat_j| may exceed r = thr^(1/(T-1)) - e1, write their nearest floats into Ph (and the mirrors), and
    return (ball >= the 2-norm of Ph - X^T over those frequencies, their number). For every other j,
    (|X_hat_j| + e_j)^(T-1) <= thr: the decision fl(fl(re^2) + fl(im^2)) <= cut with cut <= r^2 (1 - u)^3."""
    from flint import acb, acb_poly

    with workprec(PREC):
        uu = arb(fmpq(1, 2**53))
        r = arb(REFINE_THRESHOLD) ** (arb(1) / (T - 1)) - e1
        if not r > 0:
            raise ValueError("refinement impossible: the forward error is above the threshold's radius")
        cut = -f_up(-(r.lower() ** 2 * (1 - uu) ** 3))
    half = N // 2 + 1
    mag2 = Xh.real[:half] * Xh.real[:half] + Xh.imag[:half] * Xh.imag[:half]
    J = np.nonzero(mag2 > cut)[0]
    if J.size > MAX_REFINED:
        raise ValueError(f"refinement would recompute {J.size} frequencies")
    err2 = arb(0)
    with workprec(PREC):
        poly = acb_poly([acb(float(v)) for v in x])
        for j in J:
            j = int(j)
            X = poly(acb.exp_pi_i(acb(fmpq(-2 * j, N))))
            Pw = X**T
            re, im = nearest(Pw.real), nearest(Pw.imag)
            d2 = (arb(re) - Pw.real) ** 2 + (arb(im) - Pw.imag) ** 2
            Ph[j] = complex(re, im)
            if 0 < j < N - j:
                Ph[N - j] = complex(re, -im)
                d2 = 2 * d2
            err2 += d2
        return err2.sqrt(), int(J.size)


def cyclic_power_pair(xp: np.ndarray, xo: np.ndarray, T: int, N: int, refine: bool = True) -> tuple[np.ndarray, np.ndarray, arb, dict]:
    """(N y_hat_p, N y_hat_o, E, parts): float cyclic T-fold self-convolutions of two non-negative float vectors
    (length <= N) and a ball E with |y_hat - y*| <= E for every coefficient (module docstring, steps 3-5).
    ``refine``: step 4' (the low frequencies in balls), else the plain bound of step 4."""
    z = np.zeros(N, dtype=np.complex128)
    z[: xp.shape[0]] += xp
    z[: xo.shape[0]] += 1j * xo
    w, mu = twiddles(N)
    Zh = fft(z, w)
    Zr = np.conj(np.roll(Zh[::-1], 1))  # conj Z_(-j)
    Xp = (Zh + Zr) * 0.5
    Xo = (Zh - Zr) * (-0.5j)  # exact: a component swap and sign change after the halving
    Pp = hermitian_power(Xp, T)
    Po = hermitian_power(Xo, T)
    t = N.bit_length() - 1
    with workprec(PREC):
        theta = fft_theta(N, mu)
        uu = arb(fmpq(1, 2**53))
        sqN = arb(N).sqrt()
        n2 = {k: sum((arb(float(v)) ** 2 for v in x[x > 0]), arb(0)).sqrt() for k, x in (("p", xp), ("o", xo))}
        S = {k: sum((arb(float(v)) for v in x[x > 0]), arb(0)) for k, x in (("p", xp), ("o", xo))}
        nz = (n2["p"] ** 2 + n2["o"] ** 2).sqrt()
        U_fft = t * N * arb(2) ** -1071
        eF = theta * sqN * nz + U_fft
        nu = arb(2).sqrt() * arb(gamma(2))
        U_pow = sqN * arb(2) ** -944
        D, refined = {}, {}
        for k, Xh, x, Ph in (("p", Xp, xp, Pp), ("o", Xo, xo, Po)):
            e1 = eF + uu * (sqN * n2[k] + eF)
            BT1 = (S[k] + e1) ** (T - 1)  # >= (|X_hat_j| + e_j)^(T-1) for every j
            thr = arb(REFINE_THRESHOLD)
            if refine and not BT1 <= thr:
                errJ, refined[k] = _refine(Xh, x, T, N, e1, Ph)
            else:
                errJ, refined[k], thr = arb(0), 0, BT1
            D[k] = T * thr * e1 + ((1 + nu) ** (T - 1) - 1) * thr * (sqN * n2[k] + e1) + errJ + U_pow
    Wh = Pp + 1j * Po
    Y = np.conj(fft(np.conj(Wh), w))
    with workprec(PREC):
        DW = uu * (norm2_upper(Pp) + norm2_upper(Po))
        E = (D["p"] + D["o"] + DW + theta * norm2_upper(Wh)) / sqN + U_fft / N
    parts = {"theta": theta, "mu": mu, "D_p": D["p"], "D_o": D["o"], "E": E, "refined": refined}
    return Y.real.copy(), Y.imag.copy(), E, parts


# ------------------------------------------------------------------------------------------------
# One-step measures, tilt, Chernoff
# ------------------------------------------------------------------------------------------------
def one_step_pair(q: str, sigma: str, T: int, delta: str, grid: str):
    """certify's remove-direction one-step (pessimistic, optimistic) measures at the plan of the target T."""
    from certify.contract import POISSON_ADD_REMOVE
    from certify.pld.accountant import plan, run

    qq, ss, dd, h = exact(q), exact(sigma), exact(delta), exact(grid)
    pl = plan(POISSON_ADD_REMOVE, qq, ss, T, dd, h)
    r = run(POISSON_ADD_REMOVE, qq, ss, 1, pl)
    return r.one_step[("remove", True)], r.one_step[("remove", False)], h


def float_masses(s) -> np.ndarray:
    drop = max(0, max(int(m).bit_length() for m in s.masses) - 60)
    return np.array([float(int(m) >> drop) for m in s.masses]) * 2.0 ** (drop - s.K)


def saddle_lambda(s, h: fmpq, T: int, delta: float) -> tuple[float, float, float]:
    """(lambda, mean, var) of the tilted one-step law at the float saddle point T (K - lambda K') = log delta."""
    p = float_masses(s)
    keep = p > 0
    p = p[keep]
    ell = (s.lo + np.nonzero(keep)[0]) * float(h)

    def stats(lam):
        a = lam * ell + np.log(p)
        mx = a.max()
        e = np.exp(a - mx)
        Z = e.sum()
        mean = (e * ell).sum() / Z
        var = (e * (ell - mean) ** 2).sum() / Z
        return mx + math.log(Z), mean, var

    target = math.log(delta)
    lo, hi = 0.0, 1.0
    while T * (stats(hi)[0] - hi * stats(hi)[1]) > target and hi < 1e4:
        hi *= 2
    for _ in range(80):
        mid = (lo + hi) / 2
        Kv, m1, _ = stats(mid)
        if T * (Kv - mid * m1) > target:
            lo = mid
        else:
            hi = mid
    _, m1, v = stats(hi)
    return hi, m1, v


def tilted(s, lam: float, h: fmpq) -> tuple[np.ndarray, float, arb, arb]:
    """(x, Z0, rho, Zball): x_i = nearest float to m_i 2^-K e^(lam l_i) / Z0 (step 1)."""
    with workprec(PREC):
        lamb = arb(lam)
        r = (lamb * arb(h)).exp()
        cur = (lamb * arb(h) * s.lo).exp() * arb(2) ** -s.K
        ws = []
        for m in s.masses:
            ws.append(cur * int(m) if m else None)
            cur = cur * r
        Zb = sum((v for v in ws if v is not None), arb(0))
        Z0 = nearest(Zb)
        x = np.zeros(len(ws))
        rho = arb(0)
        for i, v in enumerate(ws):
            if v is None:
                continue
            vv = v / Z0
            xi = nearest(vv)
            if not xi > 2.0**-1000:
                raise ValueError("tilted mass below the normal range")
            x[i] = xi
            rel = abs(vv - xi) / xi
            if rel.upper() > rho.upper():
                rho = rel.upper()
        rho = arb(f_up(rho))
    return x, Z0, rho, Zb


class _LogMgf:
    """Float log G(s) = log sum_i x_i e^(s i) of a non-negative vector (choices only)."""

    def __init__(self, x: np.ndarray):
        keep = x > 0
        self.i = np.nonzero(keep)[0].astype(float)
        self.lx = np.log(x[keep])

    def __call__(self, s: float) -> float:
        a = self.lx + s * self.i
        mx = a.max()
        return mx + math.log(np.exp(a - mx).sum())

    def mean(self, s: float) -> float:
        a = self.lx + s * self.i
        e = np.exp(a - a.max())
        return float((e * self.i).sum() / e.sum())


def _best_s(x, T: int, b: float, upper: bool) -> tuple[float, float]:
    """(s, exponent): a float search for the Chernoff s >= 0 minimising T log G(+-s) -+ s b (convex in s; its
    derivative T mean(+-s) -+ b is monotone: bisection)."""
    g = x if isinstance(x, _LogMgf) else _LogMgf(x)
    sign = 1.0 if upper else -1.0
    d = lambda s: sign * (T * g.mean(sign * s) - b)  # noqa: E731  derivative in s
    if d(0.0) >= 0:
        return 0.0, T * g(0.0)
    lo, hi = 0.0, 1.0
    while d(hi) < 0 and hi < 1e3:
        lo, hi = hi, 2 * hi
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if d(mid) < 0 else (lo, mid)
    return hi, T * g(sign * hi) - sign * hi * b


def chernoff_tail(x: np.ndarray, T: int, b: int, upper: bool) -> arb:
    """Ball bound on the mass of x^(*T) at indices >= b (upper) or <= b (lower), x indexed from 0."""
    s = _best_s(x, T, float(b), upper)[0]  # any s >= 0 gives a bound (s = 0: the total mass)
    with workprec(PREC):
        sgn = 1 if upper else -1
        r = (arb(s) * sgn).exp()
        cur = arb(1)
        G = arb(0)
        for v in x:
            if v > 0:
                G += cur * arb(float(v))
            cur = cur * r
        return (T * G.log() - sgn * arb(s) * b).exp()


def untilted_upper_tail(s, T: int, h: fmpq, Lb: fmpq, lam: float) -> arb:
    """Ball bound on the T-fold measure's mass at losses >= Lb: min_s (sum m_i 2^-K e^(s l_i))^T e^(-s Lb)."""
    p = float_masses(s)
    keep = p > 0
    ell = (s.lo + np.nonzero(keep)[0]) * float(h)
    lp = np.log(p[keep])

    def f(sv):
        a = lp + sv * ell
        mx = a.max()
        return T * (mx + math.log(np.exp(a - mx).sum())) - sv * float(Lb)

    lo, hi = 0.0, max(4 * lam, 1.0)
    for _ in range(80):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if f(m1) < f(m2):
            hi = m2
        else:
            lo = m1
    sv = (lo + hi) / 2
    with workprec(PREC):
        sb = arb(sv)
        r = (sb * arb(h)).exp()
        cur = (sb * arb(h) * s.lo).exp() * arb(2) ** -s.K
        G = arb(0)
        for m in s.masses:
            if m:
                G += cur * int(m)
            cur = cur * r
        return (T * G.log() - sb * arb(Lb)).exp()


# ------------------------------------------------------------------------------------------------
# Weights by binary doubling, read-off
# ------------------------------------------------------------------------------------------------
def geometric(r: float, n: int) -> np.ndarray:
    """g_j ~ r^j for j < n: g[m + i] = fl(g[i] * P_m), P_m = fl(P_(m/2)^2); g_j carries at most j roundings."""
    g = np.empty(n)
    g[0] = 1.0
    m, P = 1, r
    while m < n:
        k = min(m, n - m)
        g[m : m + k] = g[:k] * P
        P = P * P
        m *= 2
    return g


class Side:
    """Suffix sums S1(k0), S2(k0) of a window of non-negative float masses (times N) and their constants."""

    def __init__(self, masses: np.ndarray, lam: float, h: fmpq):
        n = masses.shape[0]
        with workprec(PREC):
            r1b, r2b = (-arb(lam) * arb(h)).exp(), (-(arb(lam) + 1) * arb(h)).exp()
            r1, r2 = nearest(r1b), nearest(r2b)
            self.rho1 = f_up(abs(r1b - r1) / r1b)
            self.rho2 = f_up(abs(r2b - r2) / r2b)
        g1, g2 = geometric(r1, n), geometric(r2, n)
        if not (g2[-1] > 2.0**-1000 and g1[-1] > 2.0**-1000):
            raise ValueError("window too long for this tilt (weights underflow)")
        self.s1 = np.cumsum((masses * g1)[::-1])[::-1]
        self.s2 = np.cumsum((masses * g2)[::-1])[::-1]
        self.n = n


def readoff_window(side: Side, k0: int, eps: fmpq, La: fmpq, upper: bool) -> arb:
    """Ball containing a bound (upper or lower) of S1(k0) - e^(eps - La) S2(k0) for the exact masses."""
    if k0 >= side.n:
        return arb(0)
    with workprec(PREC):
        m = 2 * side.n + 2
        uu = arb(fmpq(1, 2**53))
        up_f, lo_f = (1 - uu) ** (-m), (1 + uu) ** (-m)
        n = side.n
        s1, s2 = arb(float(side.s1[k0])), arb(float(side.s2[k0]))
        e = (arb(eps) - arb(La)).exp()
        if upper:
            v = s1 * up_f / (1 - arb(side.rho1)) ** n - e * s2 * lo_f / (1 + arb(side.rho2)) ** n
        else:
            v = s1 * lo_f / (1 + arb(side.rho1)) ** n - e * s2 * up_f / (1 - arb(side.rho2)) ** n
        return v


# ------------------------------------------------------------------------------------------------
# The method
# ------------------------------------------------------------------------------------------------
class FftPld:
    """The whole pipeline for one (q, sigma, T, delta, grid); delta_up(eps) / delta_low(eps) in balls."""

    def __init__(self, q: str, sigma: str, T: int, delta: str, grid: str, N: int | None = None, alias_target: float = 1e-16, refine: bool = True):
        t0 = time.perf_counter()
        self.T, self.delta = T, exact(delta)
        sp, so, h = one_step_pair(q, sigma, T, delta, grid)
        self.h = h
        self.t_one_step = time.perf_counter() - t0
        t1 = time.perf_counter()
        lam, mean, var = saddle_lambda(sp, h, T, float(self.delta))
        self.lam = lam
        if sp.lo != so.lo or len(sp.masses) != len(so.masses):
            raise ValueError("pessimistic and optimistic one-step grids differ")
        self.o, n = sp.lo, len(sp.masses)
        xp, self.Z0p, self.rhop, _ = tilted(sp, lam, h)
        xo, self.Z0o, self.rhoo, _ = tilted(so, lam, h)
        centre = int(round(T * mean / float(h))) - T * self.o  # linear index of the tilted mean
        if N is None:  # the smallest power of two whose window's float Chernoff estimate is below alias_target
            N = 1 << max(n - 1, 1).bit_length()
            gs = (_LogMgf(xp), _LogMgf(xo))
            while True:
                a = centre - N // 2
                est = sum(math.exp(min(0.0, _best_s(g, T, float(b), up)[1])) for g in gs for (b, up) in ((a + N, True), (a - 1, False)))
                if est <= alias_target or N >= 1 << 24:
                    break
                N *= 2
        self.N = N
        self.a = centre - N // 2
        a = self.a
        t2 = time.perf_counter()
        Yp, Yo, E, self.parts = cyclic_power_pair(xp, xo, T, N, refine=refine)
        self.t_fft = time.perf_counter() - t2
        with workprec(PREC):
            self.A = {}
            for key, x in (("p", xp), ("o", xo)):
                self.A[key] = chernoff_tail(x, T, a + N, True) + chernoff_tail(x, T, a - 1, False)
            self.E = E
            shift = a % N
            Yp, Yo = np.roll(Yp, -shift), np.roll(Yo, -shift)  # window position j <-> linear index a + j
            cE = f_up(N * E)
            cEA = f_up(N * (E + self.A["o"]))
            Up = np.maximum(Yp, 0.0) + cE  # one rounding each (in the m of readoff_window)
            Lo = np.maximum(Yo - cEA, 0.0)  # true N x_k >= Lo_k / (1 + u) where positive
            # the read-off range [j0, j1) of window positions: from 8 tilted std below the tilted mean (eps is
            # only searched above it, so nothing below counts) up to where the weights e^(-(lambda+1) h j) stay
            # normal (>= e^-650); the mass above j1 goes to +inf (pessimistic) or is dropped (optimistic)
            sd = math.sqrt(T * var) / float(h)
            j0 = max(0, int(centre - a - 8 * sd))
            j1 = min(N, j0 + int(650 / ((lam + 1) * float(h))))
            self.j0, self.j1 = j0, j1
            self.La = (T * self.o + a + j0) * h
            self.Ltop = (T * self.o + a + j1) * h
            self.side_p = Side(Up[j0:j1], lam, h)
            self.side_o = Side(Lo[j0:j1], lam, h)
            # constants
            self.Cp = (1 + self.rhop) ** T * arb(self.Z0p) ** T * (-arb(lam) * arb(self.La)).exp() / N
            self.Co = (1 - self.rhoo) ** T * arb(self.Z0o) ** T * (-arb(lam) * arb(self.La)).exp() / N / (1 + arb(fmpq(1, 2**53)))
            F = sum(int(m) for m in sp.masses)
            M = F + sp.inf
            self.inf_T = (arb(M) * arb(2) ** -sp.K) ** T - (arb(F) * arb(2) ** -sp.K) ** T
            self.above = untilted_upper_tail(sp, T, h, self.Ltop, lam)
            self.finite_p_total = arb(F) * arb(2) ** -sp.K
        self.t_total_pipeline = time.perf_counter() - t1
        self.t_setup = self.t_total_pipeline - self.t_fft

    def k0(self, eps: fmpq) -> int:
        """First read-off position j (window position j0 + j) with L_(a+j0+j) > eps."""
        j = int(((eps / self.h) - (self.T * self.o + self.a + self.j0)).floor()) + 1
        return max(j, 0)

    def delta_up(self, eps: fmpq) -> arb:
        if eps < self.La:
            raise ValueError("eps below the window's first loss: the moved-up low mass would count")
        with workprec(PREC):
            w = readoff_window(self.side_p, self.k0(eps), eps, self.La, True)
            return self.inf_T + self.above + self.Cp * w

    def delta_low(self, eps: fmpq) -> arb:
        with workprec(PREC):
            w = readoff_window(self.side_o, self.k0(eps), eps, self.La, False)
            v = self.Co * w
            return v if v.lower() > 0 else arb(0)

    def bracket(self, bits: int = 30) -> tuple[fmpq, fmpq]:
        """(eps_low, eps_up) by bisection on dyadics of resolution 2^-bits inside [L_a, L_(a+N)]."""
        d = arb(self.delta)
        res = fmpq(1, 2**bits)

        def dy(x: fmpq) -> fmpq:
            return fmpq(int((x / res).floor()), 1) * res

        lo, hi = dy(self.La) + res, dy(self.Ltop)
        passes = lambda e: self.delta_up(e) <= d  # noqa: E731  (arb: True only when decided)
        fails = lambda e: self.delta_low(e) > d  # noqa: E731
        if not passes(hi):
            raise ValueError("window top does not pass")
        a, b = lo, hi  # eps_up: smallest passing
        if passes(a):
            raise ValueError("window bottom passes: window too high")
        while b - a > res:
            m = dy((a + b) / 2)
            if m in (a, b):
                break
            a, b = (a, m) if passes(m) else (m, b)
        eps_up = b
        a, b = lo, eps_up  # eps_low: largest failing
        if not fails(a):
            return fmpq(0), eps_up
        while b - a > res:
            m = dy((a + b) / 2)
            if m in (a, b):
                break
            a, b = (m, b) if fails(m) else (a, m)
        return a, eps_up


# ------------------------------------------------------------------------------------------------
# Comparisons
# ------------------------------------------------------------------------------------------------
KNOWN = {10000: ("2.446578", "2.446811"), 100000: ("8.984214", "8.985158"), 1000000: ("38.806717", "38.812499")}


def certify_remove_bracket(q: str, sigma: str, T: int, delta: str, grid: str) -> tuple[fmpq, fmpq, float]:
    """certify's exact composition, remove direction only: (eps_low, eps_up, seconds of plan + run + read-off)."""
    from certify.contract import POISSON_ADD_REMOVE
    from certify.pld import compose, readoff
    from certify.pld.accountant import plan, run
    from certify.pld.discretise import EXTRA_PREC

    from certify.pld.accountant import one_steps

    compose.clear_cache()
    one_steps.cache_clear()  # the one-step sampling is timed too
    t = time.perf_counter()
    qq, ss, dd, h = exact(q), exact(sigma), exact(delta), exact(grid)
    pl = plan(POISSON_ADD_REMOVE, qq, ss, T, dd, h)
    r = run(POISSON_ADD_REMOVE, qq, ss, T, pl, lower=("remove",))
    with workprec(pl.K + EXTRA_PREC):
        up = readoff.epsilon_pass([r.composed[("remove", True)]], dd, h)
        lo = readoff.epsilon_fail([r.composed[("remove", False)]], dd, h, up)
    return lo, up, time.perf_counter() - t


def dp_accounting_pair(q: str, sigma: str, T: int, delta: str, grid: str) -> dict:
    from dp_accounting.pld import privacy_loss_distribution as PLD

    out = {}
    for pess in (True, False):
        t = time.perf_counter()
        p = PLD.from_gaussian_mechanism(
            float(sigma), sampling_prob=float(q), value_discretization_interval=float(grid), pessimistic_estimate=pess, use_connect_dots=pess
        )
        e = p.self_compose(T).get_epsilon_for_delta(float(delta))
        out["pess" if pess else "opt"] = (e, time.perf_counter() - t)
    return out


def delta_effect(m: FftPld, eps: fmpq) -> tuple[float, float]:
    """(delta_up at E = 0 and A = 0 ... not available separately; instead the relative size of the E-term)
    The window sum of E alone: C e^(-lambda La) E N sum_(k >= k0) r1^(k-a) (1 - e^(eps - L_k)) <= that times
    the S1 of a flat vector: returned as an absolute delta contribution and relative to delta."""
    j0 = m.k0(eps)
    n = m.N
    lamh = m.lam * float(m.h)
    g = np.exp(-lamh * np.arange(j0, n))
    w = 1 - np.exp(float(eps - m.La) - float(m.h) * np.arange(j0, n))
    contrib = float(m.Cp.mid()) * float((m.E * n).mid()) * float(np.sum(g * np.maximum(w, 0)))
    return contrib, contrib / float(m.delta)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", default="10000,100000,1000000")
    ap.add_argument("--q", default="0.01")
    ap.add_argument("--sigma", default="2")
    ap.add_argument("--delta", default="1e-6")
    ap.add_argument("--grid", default="1e-4")
    ap.add_argument("--no-certify", action="store_true", help="skip certify's exact composition (use the known brackets)")
    ap.add_argument("--no-dp", action="store_true", help="skip dp_accounting")
    ap.add_argument("--plain", action="store_true", help="the plain error bound (step 4), without the refinement (step 4')")
    args = ap.parse_args(argv)
    rows = []
    try:
        steps = [int(float(s)) if float(s).is_integer() else int(s) for s in args.steps.split(",") if s.strip()]
        if not steps or min(steps) < 2:
            raise ValueError
    except ValueError:
        print(f"--steps: expected integers >= 2 separated by commas, got {args.steps!r}")
        return 2
    for T in steps:
        twiddles.cache_clear()
        t = time.perf_counter()
        try:
            m = FftPld(args.q, args.sigma, T, args.delta, args.grid, refine=not args.plain)
            t_build = time.perf_counter() - t
            t2 = time.perf_counter()
            lo, up = m.bracket()
        except Exception as err:  # a prototype: any refusal or failure is one line, not a traceback
            print(f"T = {T}: no bracket ({type(err).__name__}: {err})")
            continue
        t_read = time.perf_counter() - t2
        total = time.perf_counter() - t
        with workprec(PREC):
            tw = time.perf_counter()
            twiddles.cache_clear()
            twiddles(m.N)
            t_tw = time.perf_counter() - tw
        eff, rel = delta_effect(m, up)
        print(f"T = {T}: N = 2^{m.N.bit_length() - 1}, lambda = {m.lam:.6g}, window losses [{float(m.La):.4f}, {float(m.Ltop):.4f}]")
        print(f"  FFT bracket (remove) [{float(lo):.6f}, {float(up):.6f}]  width {float(up - lo):.3e}")
        print(
            f"  E = {float(m.E.mid()):.3e} (tilted, normalised units;"
            f" theta = {float(m.parts['theta'].mid()):.3e}, mu = {float(m.parts['mu'].mid()):.3e},"
            f" frequencies in balls {m.parts['refined']['p']} + {m.parts['refined']['o']}),"
            f" alias A_opt = {float(m.A['o'].mid()):.3e}, rho = {float(m.rhop.mid()):.2e}"
        )
        print(
            f"  E's share of delta_up at eps_up (float estimate): {eff:.3e} absolute, {rel:.3e} relative;"
            f"  +inf mass {float(m.inf_T.mid()):.3e}, above-window {float(m.above.mid()):.3e}"
        )
        print(
            f"  time: total {total:.2f} s = one-step measures {m.t_one_step:.2f} + setup (tilt, Chernoff, window sums) {m.t_setup:.2f}"
            f" + transforms and powers {m.t_fft:.2f} (of which twiddles {t_tw:.2f}) + bisection {t_read:.2f}; build {t_build:.2f}"
        )
        row = {"T": T, "fft": (lo, up), "fft_s": total, "fft_no_onestep_s": total - m.t_one_step}
        if not args.no_dp:
            dp = dp_accounting_pair(args.q, args.sigma, T, args.delta, args.grid)
            both = dp["pess"][1] + dp["opt"][1]
            print(
                f"  dp_accounting pess {dp['pess'][0]:.6f} ({dp['pess'][1]:.2f} s), opt {dp['opt'][0]:.6f} ({dp['opt'][1]:.2f} s);"
                f" both {both:.2f} s; FFT / both = {total / both:.2f}x"
            )
            row["dp_s"] = both
        if not args.no_certify:
            clo, cup, cs = certify_remove_bracket(args.q, args.sigma, T, args.delta, args.grid)
            print(
                f"  certify exact (remove) [{float(clo):.6f}, {float(cup):.6f}] width {float(cup - clo):.3e}, {cs:.2f} s;"
                f" FFT width / exact width = {float((up - lo) / (cup - clo)):.2f}"
            )
            ok = up >= clo and lo <= cup
            print(f"  overlap with certify's exact bracket: {ok}")
        elif T in KNOWN:
            print(f"  certify exact (both directions, recorded) [{KNOWN[T][0]}, {KNOWN[T][1]}]")
        rows.append(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
