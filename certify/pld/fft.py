"""Products of PLDs by ONE tilted float FFT with a proven a-priori error bound (issue 24; engine module).

From a research prototype (measured in benchmarks/README.md, "Issue 24"; removed once this module landed), written
for production: exact plans, a cached twiddle table, any direction's one-step measures, refusals instead of
wrong numbers. pld/dpsgd certificates use it by default from 1e4 steps on (:func:`certify.pld.accountant.use_fft`),
events/pld certificates from 1000 events on (:func:`certify.events.pld_certificates.uses_fft`); the witness ``fft``
records each direction's :class:`FftPlan`, which the checker re-derives and requires equal.

Factors. The engine composes a PRODUCT of factors (pessimistic one-step measure, optimistic one-step measure,
count c_k >= 1), T = sum_k c_k in all: DP-SGD's T-fold product is the one factor (pess, opt, T); a ledger of
different mechanisms (:mod:`certify.pld.ledger`) gives one factor per distinct mechanism with its count. Steps 0-7
below are written for one factor; what changes for several is said in each step (the tilt, the windows and the
read-off are the same with sums over the factors; each factor is transformed and powered alone, step 4'' multiplies
the powers).

Use. :func:`fft_plan` makes every float choice (tilt lambda, transform length N, window start a, read-off range
[j0, j1), refinement threshold, Chernoff parameters) and returns them as exact numbers (:class:`FftPlan`);
:func:`compose_pair` runs the deterministic pipeline for that plan and returns two :class:`FftDirection`
objects (pessimistic, optimistic) that :func:`certify.pld.readoff.delta_at` reads like a composed measure:
the upper (pessimistic) / lower (optimistic) endpoint of the ball bounds the exact T-fold product's delta(eps)
of the given one-step measures, hence (Zhu-Dong-Wang Thm 10, :mod:`certify.pld.discretise`) the composed
pair's curve. :func:`directions` does this for every direction of a contract (Poisson add/remove: ``remove``
and ``add``, each composed from its own one-step measures; fixed-size replace-one: ``max``), and
:func:`bracket` reads off the certified [eps_low, eps_up] (worst direction: the max over directions, as
:func:`certify.pld.readoff.delta_upper`).

Measured before the two-table twiddles of step 3' (which made "cold" about "warm": 0.5 s -> 20 ms at N = 2^20;
the certificate path's timings are in docs/theory/pld.md) (2026-12-03, this 2-core machine shared at load about 1.5,
one process; Poisson add/remove, q = 0.01,
sigma = 2, delta = 1e-6, grid 1e-4; :func:`bracket`, BOTH directions, including the one-step sampling; "cold" with
the twiddle table built, "warm" with it cached; certify_pld = the exact composition with the derived add
direction, dp_acc = dp_accounting 0.6.0's pessimistic + optimistic PLD):

| T | FFT bracket | certify_pld bracket | FFT s cold (warm) | certify_pld s | dp_acc s |
|---|---|---|---|---|---|
| 1e4 | [2.446578, 2.446810] | [2.446578, 2.446811] | 0.57 (0.50) | 0.60 | 0.25 |
| 1e5 | [8.984214, 8.985158] | [8.984214, 8.985158] | 1.15 (0.80) | 2.05 | 0.43 |
| 1e6 | [38.806716, 38.811489] | [38.806717, 38.812498] | 1.75 (1.11) | 6.27 | 1.00 |

(eps_up at 1e6 is below certify's: certify's truncation carries about T delta 2^-30 to +inf, see the prototype.)

Below the read-off range (eps < L_(a+j0), see 7) the pessimistic read-off is a non-finite ball (it contains
every number: readoff's "undecided", never passes, never fails; :func:`delta_bound` raises UndecidedError).

Notation. u = 2^-53 (binary64, round to nearest); gamma_n = n u / (1 - n u) (Higham, Accuracy and Stability of
Numerical Algorithms, 2nd ed. (2002), Sec. 3.1). Standard model (Higham (2.4)): fl(a op b) = (a op b)(1 + d),
|d| <= u, for op in + - * / on reals, barring underflow; with gradual underflow (Higham (2.8))
fl(a op b) = (a op b)(1 + d) + e, |e| <= 2^-1075, d e = 0, and + - are exact on subnormals.
Complex multiplication by the usual formula (or with an FMA in either component): each component has error
<= gamma_2 (|ac| + |bd|) resp. gamma_2 (|ad| + |bc|), so |fl(xy) - xy| <= sqrt(2) gamma_2 |x||y| (Higham
Lemma 3.5; with an FMA: fma(a, c, -fl(bd)) = (ac - bd(1 + d1))(1 + d2), the same component bound).
Complex + and -: |fl(x +- y) - (x +- y)| <= u |x +- y| (componentwise u).

0. Input. One-step measures (:class:`certify.pld.compose.Pld`): integers m_i at losses l_i = (o + i) h, units
   2^-K, plus m_inf at +inf; a pessimistic one (its curve bounds the one-step curve from above) and an
   optimistic one (from below), put on a common index base o (zero padding). By certify's composition
   argument (:mod:`certify.pld.compose`, Zhu, Dong, Wang "Optimal accounting of differential privacy via
   characteristic function", AISTATS 2022, Thm 10) the EXACT T-fold product of the pessimistic (optimistic)
   measure has a curve above (below) the true T-fold curve, and delta(eps) = m_inf + sum_k c_k (1 - e^(eps -
   L_k))_+ is non-decreasing in every c_k, in m_inf and in every L_k (:mod:`certify.pld.readoff`). So it
   suffices to bound the T-fold masses c_k from above (pessimistic) resp. below (optimistic), coefficientwise.

1. Tilt. For lambda > 0 (the plan's exact dyadic; any value is sound): w_i = m_i 2^-K e^(lambda l_i). Then
   (w^(*T))_k = e^(lambda L_k) (m^(*T))_k exactly, L_k = (T o + k) h. Z0 = the binary64 number nearest to the
   ball of sum w_i (FLINT's evaluation of the masses' integer polynomial at e^(lambda h)); x_i = floats within
   relative rho of w_i / Z0, formed in blocks of TILT_BLOCK atoms from one anchor each (:func:`tilted`: about 70 u;
   m_i = 0 gives x_i = 0 exactly), i.e. |w_i / Z0 - x_i| <= rho x_i. All entries
   being >= 0, (1 - rho)^T (x^(*T))_k <= ((w / Z0)^(*T))_k <= (1 + rho)^T (x^(*T))_k, and
   c_k = ((w / Z0)^(*T))_k Z0^T e^(-lambda L_k). The vector x (exact floats) is what is convolved.
   The plan's lambda: the float saddle point of delta, T (K(lambda) - lambda K'(lambda)) = log delta, K the
   one-step cumulant generating function of the losses; the tilted T-fold law then has its bulk near eps(delta).
1'. Tiny tilted masses (w_i / Z0 not certainly above TINY = 2^-1000, far below the tilt's bulk: a large tilt at
   few steps) are not convolved as floats: the pessimistic measure's mass there is moved UP to the next kept
   atom (or to +inf above the last), the optimistic measure's is dropped, before the tilt. Both move the
   one-step curve m_inf + sum m_i (1 - gamma e^(-l_i))_+ in the intended direction at every gamma >= 0 (it is
   non-decreasing in every l_i and m_i), so the changed measures still bound the one-step curve.

2. Window and wrap-around. The transform has length N = 2^t >= n; x is zero-padded. The float pipeline
   computes the cyclic convolution y*_p = sum_(k = p mod N) (x^(*T))_k. The window is the plan's N consecutive
   indices [a, a + N); for k in it, y*_(k mod N) = (x^(*T))_k + alias_k with 0 <= alias_k <= A := (mass of
   x^(*T) below a) + (mass above a + N - 1). Chernoff (exact MGF of x in balls, Markov's inequality on e^(sK)):
   mass at >= b <= G(s)^T e^(-s b), mass at <= b <= G(-s)^T e^(s b), G(s) = sum_i x_i e^(s i), any s >= 0 (the
   plan's exact s).

3. Forward transform (own iterative radix-2 decimation-in-time Cooley-Tukey: bit reversal, then t stages of
   butterflies (a, b) -> (a + w b, a - w b)), applied to z = x_pess + i x_opt (both real measures in one
   complex transform). Higham Thm 24.2: if the computed twiddles satisfy |w_hat - w| <= mu, then
   ||Z_hat - Z||_2 <= theta ||Z||_2, theta = t eta / (1 - t eta), eta = mu + gamma_4 (sqrt 2 + mu).
   ||Z||_2 = sqrt(N) ||z||_2 (Parseval). Stage s uses w_(2^s)^j = w_N^(j N / 2^s): the same numbers as stage t,
   so one table w_hat_j ~ w_N^j = e^(-2 pi i j / N), j < N/2, and one mu serve every stage.
3'. Twiddles (:func:`twiddles`, cached per N, at most TWIDDLE_CACHE lengths). N = 2^t, M = 2^floor(t/2),
   H = N / (2M); every j < N/2 is j = hi M + lo (lo < M, hi < H) and w_N^j = W2_hi W1_lo with
   W1_lo = e^(-2 pi i lo / N), W2_hi = e^(-2 pi i hi M / N) (exactly). The two small tables (M + H <= 2 sqrt(N)
   entries) come from arb.sin_cos_pi_fmpq at PREC bits, each component the binary64 number nearest to the
   ball's midpoint; their errors e1 >= max_lo |A_lo - W1_lo|, e2 >= max_hi |B_hi - W2_hi| are DECIDED in balls
   (the float against the same ball; the upper endpoint of the ball of the distance). The table entry is
   w_hat_j = fl(B_hi A_lo), one numpy complex multiplication. With |W1| = |W2| = 1, |A| <= 1 + e1, |B| <= 1 + e2:
   |A B - W1 W2| = |A (B - W2) + (A - W1) W2| <= (1 + e1) e2 + e1, and (Higham Lemma 3.5, the standard model
   above) |fl(A B) - A B| <= sqrt 2 gamma_2 |A| |B| <= sqrt 2 gamma_2 (1 + e1) (1 + e2). So every entry obeys
   |w_hat_j - w_N^j| <= mu := (1 + e1) e2 + e1 + sqrt 2 gamma_2 (1 + e1) (1 + e2) (evaluated in balls, rounded
   up to a float), measured 3.92 u (N = 2^10) to 3.97 u (N = 2^22) instead of about u for an all-Arb table
   (eta = mu + gamma_4 (sqrt 2 + mu) grows from about 6.7 u to 9.7 u: E about 1.5x, the brackets unchanged). No underflow: every nonzero component
   of A and B is >= sin(2 pi / N) > 2^-22 in magnitude (N <= 2^22), so every product of components is a normal
   number or an exact 0. Cost: 2 sqrt(N) Arb evaluations instead of N/8 (plus N/8 ball -> float conversions):
   at N = 2^20, 0.5 s -> a few ms.
   Separation: X_p[j] = (Z_j + conj Z_(-j)) / 2, X_o[j] = (Z_j - conj Z_(-j)) / (2i); the map is linear with
   2-norm <= 1, the computed one adds one rounding per component (relative u): with e_F = theta sqrt(N) ||z||_2,
   ||X_hat_p - X_p||_2 <= e_F + u (sqrt(N) ||x_p||_2 + e_F) =: e_1 (the same for o). The computed X_hat_p is
   exactly Hermitian (fl commutes with conjugation), so only j <= N/2 is powered.

4. Pointwise T-th power by binary powering. (a) exact vs perturbed input: |a^T - b^T| <= T |a - b|
   max(|a|, |b|)^(T-1); |X_j| <= sum x =: S and |X_hat_j| <= S + e_1 =: B, so ||X_hat^T - X^T||_2 <= T B^(T-1) e_1.
   (b) rounding: a computed power built from k factors by m = k - 1 complex products carries relative error
   |prod (1 + d)| - 1 with m factors |d| <= nu = sqrt 2 gamma_2 (induction: combining powers k1, k2 gives
   (k1 - 1) + (k2 - 1) + 1 factors), so |P_hat_j - X_hat_j^T| <= ((1 + nu)^(T-1) - 1) |X_hat_j|^T, and
   ||X_hat^T||_2 <= B^(T-1) ||X_hat||_2 <= B^(T-1) (sqrt(N) ||x||_2 + e_1).
   (c) underflow of the power: at most 2 log2 T + 2 products per entry, each adding <= sqrt 2 * 2^-1074
   absolutely, propagated through later products by factors <= 2 B^T <= 4, so <= 4^64 2^-1072 per entry:
   U_pow = sqrt(N) 2^-944 in 2-norm (T < 2^62 is required).
4'. Refinement (the plan's threshold thr > 0; thr = 0 keeps the plain bound (a)-(c)). With
   r = thr^(1/(T-1)) - e_1 (balls), every j <= N/2 whose float fl(fl(Re^2) + fl(Im^2)) exceeds cut = a float
   <= r^2 (1 - u)^3 is recomputed in balls: X_j = sum_i x_i e^(-2 pi i ij/N) (acb_poly at acb.exp_pi_i, REFINE_PREC
   bits; blocks of REFINE_BLOCK terms, each block's power z^(B b) from its exact angle: a Horner step over
   complex balls (rectangles) can grow radii by |Re z| + |Im z| <= sqrt 2), P_j = X_j^T, P_hat_j := the nearest
   floats (mirrored to N - j), |P_hat_j - X_j^T| decided in balls.
   For every other j, |X_hat_j| <= r (fl(a^2 + b^2) <= cut implies a^2 + b^2 <= cut (1 - u)^-2 <= r^2), so
   (|X_hat_j| + e_j)^(T-1) <= thr and over those j ||X_hat^T - X^T||_2 <= T thr e_1 (Cauchy-Schwarz on
   sum_j e_j^2 <= e_1^2), ||P_hat - X_hat^T||_2 <= ((1 + nu)^(T-1) - 1) thr ||X_hat||_2: b = min(thr, B^(T-1))
   replaces B^(T-1). Combination W = P_hat_p + i P_hat_o: one rounding per component, ||W_hat - W||_2 <=
   u (||P_hat_p||_2 + ||P_hat_o||_2); every ||.||_2 of a float vector is bounded from the floats: the fl squares
   summed in index order (np.cumsum: the same bits on every machine; :func:`norm2_upper`), in balls.

5. Inverse transform y = conj(F conj(W_hat)) / N (conjugations exact, 1/N in balls), again Thm 24.2:
   ||fl(F conj W_hat) - F conj W_hat||_2 <= theta sqrt(N) ||W_hat||_2. The exact target is
   F^-1 (X_p^T + i X_o^T) = y*_p + i y*_o. Every coefficient of a vector is bounded by its 2-norm and
   ||F v||_2 = sqrt(N) ||v||_2, so for every p:
   |Re y_hat_p - y*_p,p|, |Im y_hat_p - y*_o,p| <= E := (D_p + D_o + D_W + theta ||W_hat||_2) / sqrt(N) + U_fft / N,
   D_side = T b e_1 + ((1 + nu)^(T-1) - 1) b (sqrt(N) ||x||_2 + e_1) + (refined frequencies' error) + U_pow;
   U_fft covers underflow inside the transforms and the halvings (t stages, each <= sqrt(2N) 2^-1073 in
   2-norm, amplified by sqrt(2) per later stage: <= t N 2^-1071), and the same inside e_F.

6. Coefficient bounds (k in the window, p = k mod N): (x^(*T))_k <= y*_p <= Re y_hat_p + E (alias only adds,
   so the upper bound needs no A) and (x^(*T))_k >= y*_p - A >= Im y_hat_p - E - A, clipped at 0. Untilted:
   c_k <= (1 + rho)^T (y_hat_p + E) Z0^T e^(-lambda L_k), c_k >= (1 - rho)^T max(0, y_hat_p - E - A) Z0^T
   e^(-lambda L_k). The plan's N: the smallest power of two >= n whose float Chernoff estimate of A is
   <= ALIAS_TARGET (a choice); its window is centred on the tilted mean.

7. Read-off over the plan's range [j0, j1) of window positions (j0: 8 tilted standard deviations below the
   tilted mean; j1: where the weights e^(-(lambda + 1) h j) would leave the normal range, or N).
   Pessimistic: delta_up(eps) = (M^T - F^T) [the +inf mass of the T-fold product of a measure with finite
   mass F and total M, exact in balls] + U_above [Chernoff on the untilted pessimistic measure: mass at losses
   >= L_(a+j1), sent to +inf] + sum_(j0 <= j < j1, L_k > eps) c_k^up (1 - e^(eps - L_k)); the mass below
   L_(a+j0) (window positions below j0, alias, the mass below a) is not bounded at all: it adds nothing as
   long as L_(a+j0) <= eps (moving it up to L_(a+j0) only raises delta, and there it contributes 0). That is
   the read-off's range: below it the pessimistic read-off is refused (a non-finite ball).
   Optimistic: the lower masses of the read-off range only (dropping mass and the +inf mass lowers delta), valid
   for every eps. The range's sum is sum_(k >= k0) c_k (1 - e^(eps - L_k)) = C e^(-lambda L_(a+j0)) (S1 -
   e^(eps - L_(a+j0)) S2), S1 = sum U_j r1^j, S2 = sum U_j r2^j (j from j0), r1 = e^(-lambda h),
   r2 = e^(-(lambda + 1) h): the powers of float r1_hat, r2_hat by binary doubling (g[m + i] = fl(g[i]
   fl(r^m)): at most j roundings for g_j), the products with U_k and the suffix sums (np.cumsum, recursive
   summation) of non-negative terms; every computed quantity is within [(1 - u)^m, (1 - u)^-m] of its exact
   value for m <= 2 n + 2 roundings (Higham (3.4), (4.3)-(4.4)), and r_hat^j is within (1 +- rho_r)^n of r^j
   (rho_r decided in balls). The subtraction and all constants are done in balls.

Several factors (x_k, c_k), k = 1..F (the same grid h, the same lambda and K; o_k each factor's base). The product's
atoms are at losses (B + k) h, B = sum_k c_k o_k (the plan's ``base``, for one factor T o); the tilt is
multiplicative over the factors, so (prod_k w_k^(*c_k))_k = e^(lambda L_k) (prod_k m_k^(*c_k))_k and the
normalisations Z0_k and rho_k enter as prod_k Z0_k^(c_k) and prod_k (1 +- rho_k)^(c_k) (steps 1, 6). Chernoff
(steps 2, 7): the MGF of the product is prod_k G_k(s)^(c_k). The +inf mass (step 7): prod_k M_k^(c_k) -
prod_k F_k^(c_k). The plan's saddle point solves sum_k c_k (K_k - lambda K_k') = log delta, its mean and variance
are the sums of c_k copies.
4''. Product of the factors' powers (each factor transformed alone, steps 3-4' with its count c_k for T; e_1,k,
   D_k >= ||P_hat_k - X_k^(c_k)||_2 per side; P_hat_k = X_hat_k for c_k = 1). With m_k >= max(||P_hat_k||_inf,
   ||X_k^(c_k)||_inf) (||X_k^(c_k)||_inf <= S_k^(c_k), S_k = sum x_k; ||P_hat_k||_inf from the floats, see
   :func:`sup_upper`), telescoping prod_k A_k - prod_k B_k = sum_k (prod_(l<k) B_l)(A_k - B_k)(prod_(l>k) A_l)
   gives ||prod_k P_hat_k - prod_k X_k^(c_k)||_2 <= sum_k D_k prod_(l != k) m_l. The F - 1 float products Q_hat
   (left to right, :func:`cmul`) carry relative error rc = (1 + nu)^(F-1) - 1 (Higham Lemma 3.5 per product, as
   (b)), so ||Q_hat - prod_k P_hat_k||_2 <= rc / (1 - rc) ||Q_hat||_2; an underflow in a product adds at most
   2^-1073 per component, carried by later factors of modulus <= max(1, m_l) and roundings <= (1 + nu):
   U_comb = sqrt(N) (F - 1) 2^-1071 prod_l max(1, m_l) (1 + nu)^F. D_side := the sum of the three replaces
   step 5's D_p / D_o. (One factor: D_1 exactly.) The refinement (4') is applied per factor of count >= 2 when
   the plan's threshold is positive; the default plan refines only a single factor (:func:`default_threshold`).

What this module assumes (stated plainly; not proved here):
 * numpy's elementwise float64 ufuncs (add, subtract, multiply, complex multiply, and their in-place forms)
   round each operation to nearest as the standard model says (no extended precision, no flush-to-zero /
   denormals-are-zero mode; an FMA is covered, see above), and np.sum / np.cumsum add the given terms (any
   order is covered by (4.4));
 * Higham Thm 24.2's model matches this code's butterflies exactly (DIT, bit reversal first, twiddle
   w_(2^s)^j per stage) - checked by reading, not by a proof assistant; its underflow-free hypothesis is
   replaced by the crude additive terms U_fft and U_pow, whose derivation above is a sketch;
 * the float choices of :class:`FftPlan` are free: soundness never depends on them, only the tightness; a
   certificate would record the plan and a checker would redo the pipeline (pure numpy in a fixed order).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..balls import InputError, UndecidedError, arb, fmpq, workprec
from .compose import Pld

#: working precision (bits) of every ball of this module
PREC = 200
#: the plan's default refinement threshold (step 4'): frequencies with (|X_hat_j| + e)^(T-1) above it in balls
REFINE_THRESHOLD = fmpq(1, 2**10)
#: the plan refines from this many steps on: below, the plain bound keeps delta within 1e-6 relative of the exact
#: product's at the target (measured: both contracts, T = 2..50; fixed-size T = 100 needs the refinement: 3.6e-6)
#: and the refinement costs seconds where many frequencies have |X_j| near 1 (fixed-size, T = 2: 35 s, T = 10: 22 s)
REFINE_MIN_STEPS = 64
#: at most this many frequencies are recomputed in balls (a refusal beyond: UndecidedError)
MAX_REFINED = 20000
#: at most this many (frequency, nonzero block) evaluations per refinement, about 15 us each (a refusal beyond:
#: UndecidedError, and certify's default then composes by the exact chain). Measured: the benchmark's T = 1e4..1e6
#: need 1,500-6,000; q = 1e-4, sigma = 0.5, T = 1e5, grid 1e-4 wanted 20,000 x 400 (56 s before this cap)
MAX_REFINE_WORK = 200_000
#: the refinement evaluates the DFT in blocks of this many terms (radius growth <= 2^(REFINE_BLOCK / 2) per block)
REFINE_BLOCK = 64
#: working precision (bits) of the refinement's balls (step 4')
REFINE_PREC = 128
#: the plan's alias target: N doubles until the float Chernoff estimate of A is below it (a choice)
ALIAS_TARGET = 1e-16
#: largest transform length (memory: about fifteen complex vectors of length N, 1 GB at 2^22; measured 285 MB
#: peak at N = 2^20, T = 1e6, q = 0.01, sigma = 2, grid 1e-4). Beyond the alias target's N the plan stops here
#: (sound: the alias bound A only lowers the optimistic side)
MAX_N = 1 << 22
#: twiddle tables kept (module-level cache, LRU)
TWIDDLE_CACHE = 4
#: the read-off range starts this many tilted standard deviations below the tilted mean (a choice)
RANGE_SDS = 8


# ------------------------------------------------------------------------------------------------
# balls <-> floats
# ------------------------------------------------------------------------------------------------
def nearest(x: arb) -> float:
    """The binary64 number nearest to the ball's midpoint (CPython's int -> float is correctly rounded); +-inf beyond
    the float range, as IEEE rounding gives it (callers check finiteness)."""
    man, e = x.mid().man_exp()
    try:
        return math.ldexp(float(int(man)), int(e))
    except OverflowError:
        return math.copysign(math.inf, int(man))


def f_up(x: arb) -> float:
    """A binary64 number >= every point of the (finite) ball."""
    hi = x.upper()
    f = nearest(hi)
    while arb(f) < hi:
        f = math.nextafter(f, math.inf)
    return f


def dyadic(x: float) -> fmpq:
    """The exact value of a finite float."""
    n, d = float(x).as_integer_ratio()
    return fmpq(n, d)


#: significant bits kept of a float choice of the plan (lambda, the Chernoff s): numpy's exp / log differ by ulps
#: between CPUs (SIMD kernels), so a choice keeps only its leading bits; then producer and checker agree except when
#: a value lies within a few ulps of a rounding boundary (there a genuine certificate would be refused, never a forged
#: one accepted). Soundness never depends on the choices.
CHOICE_BITS = 24


def choice(x: float) -> float:
    """x rounded to CHOICE_BITS significant bits (a float, exactly a dyadic rational)."""
    if x == 0 or not math.isfinite(x):
        return x
    m, e = math.frexp(x)
    return math.ldexp(round(m * 2**CHOICE_BITS), e - CHOICE_BITS)


def gamma(n: int) -> fmpq:
    """gamma_n = n u / (1 - n u) as an exact rational."""
    uu = fmpq(1, 2**53)
    return n * uu / (1 - n * uu)


def _u() -> arb:
    return arb(fmpq(1, 2**53))


# ------------------------------------------------------------------------------------------------
# The FFT (own radix-2 DIT Cooley-Tukey, Higham Sec. 24.1)
# ------------------------------------------------------------------------------------------------
def _table(N: int, ks: range, step: int) -> tuple[np.ndarray, arb]:
    """(v, e): v[i] = the binary64 rounding (per component, of the ball's midpoint) of e^(-2 pi i k step / N) for k
    = ks[i], and a ball e >= max_i |v[i] - exact| decided in balls against the same Arb ball (step 3')."""
    v = np.empty(len(ks), dtype=np.complex128)
    e = arb(0)
    for i, k in enumerate(ks):
        sk, ck = arb.sin_cos_pi_fmpq(fmpq(2 * k * step, N))
        if not (ck.rad() < arb(2) ** -150 and sk.rad() < arb(2) ** -150):
            raise UndecidedError("twiddle ball too wide")
        c, s = nearest(ck), nearest(sk)
        v[i] = complex(c, -s)
        d = ((arb(c) - ck) ** 2 + (arb(s) - sk) ** 2).sqrt()  # |v[i] - e^(-i theta)| as a ball
        if d.upper() > e.upper():
            e = d.upper()
    return v, e


@lru_cache(maxsize=TWIDDLE_CACHE)
def twiddles(N: int) -> tuple[np.ndarray, arb]:
    """(w, mu): w[j] = a float approximation of e^(-2 pi i j / N), j < N/2, and a ball mu >= max_j |w[j] - exact|
    (step 3'). Two small tables from Arb (j = hi M + lo: A[lo], lo < M, and B[hi], hi < N / (2M), M about
    sqrt(N / 2)) and their N / 2 products in numpy. Cached per N; the array is read-only."""
    if N < 2 or N & (N - 1):
        raise InputError("N", f"the transform length must be a power of two >= 2, got {N}")
    half = N // 2
    t = N.bit_length() - 1
    M = 1 << (t // 2)  # M <= N/2; H = N / (2M) >= 1
    H = half // M
    with workprec(PREC):
        A, e1 = _table(N, range(M), 1)
        B, e2 = _table(N, range(H), M)
        g2 = arb(gamma(2))
        mu = (1 + e1) * e2 + e1 + arb(2).sqrt() * g2 * (1 + e1) * (1 + e2)
        mu = arb(f_up(mu))
    w = cmul(B[:, None], A[None, :]).reshape(half)  # w[hi M + lo] = fl(B[hi] A[lo]) (one complex multiply each)
    w.flags.writeable = False
    return w, mu


@lru_cache(maxsize=TWIDDLE_CACHE)
def bitrev(N: int) -> np.ndarray:
    t = N.bit_length() - 1
    r = np.zeros(N, dtype=np.int64)
    for b in range(t):
        r |= ((np.arange(N) >> b) & 1) << (t - 1 - b)
    r.flags.writeable = False
    return r


def cmul(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x y elementwise by the classical formula in real float64 operations, (xr yr - xi yi) + i (xr yi + xi yr), each
    operation rounded once (Higham Lemma 3.5's model). numpy's own complex multiply is not used: its SIMD kernels
    differ between CPUs (with and without AVX2/FMA they give other bits), and a certificate's checker must reproduce
    the producer's floats bit for bit on any IEEE binary64 machine; separate real ufuncs are never fused."""
    xr, xi, yr, yi = x.real, x.imag, y.real, y.imag
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), dtype=np.complex128)
    out.real = np.subtract(np.multiply(xr, yr), np.multiply(xi, yi))
    out.imag = np.add(np.multiply(xr, yi), np.multiply(xi, yr))
    return out


def _split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Contiguous copies of the real and imaginary parts."""
    return np.ascontiguousarray(x.real, dtype=np.float64), np.ascontiguousarray(x.imag, dtype=np.float64)


def _join(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    out = np.empty(re.shape, dtype=np.complex128)
    out.real, out.imag = re, im
    return out


#: cache blocking of :func:`fft` (speed only: the same butterflies, another order across independent ones). Pass 1
#: does the first stages chunk by chunk (FFT_CHUNK elements, of which the first log2(FFT_ROWS) stages in a
#: transposed layout, rows of FFT_CHUNK / FFT_ROWS); later passes do up to FFT_PASS stages each, by column blocks
#: of FFT_CHUNK elements. Measured best of 2^14 .. 2^18 (long rows count more than the 512 KB L2 cache)
FFT_ROWS = 256
FFT_CHUNK = 1 << 17
FFT_PASS = 7
#: numpy's ufunc buffer size during :func:`fft`: at most the rows' length, so that 2-d strided operands are used in
#: place (with numpy's default 8192 they are copied into buffers: about 3x slower); results do not depend on it
FFT_BUFSIZE = 16


def _butterflies(ulr, uli, uhr, uhi, wr, wi, vlr, vli, vhr, vhi) -> None:
    """(v_lo, v_hi) = (u_lo + t, u_lo - t), t = u_hi w by :func:`cmul`'s formula, each operation rounded once; the
    v arrays (disjoint from the u's) hold the partial products meanwhile: elementwise the operations of the
    reference transform, in its order."""
    np.multiply(uhr, wr, out=vhr)
    np.multiply(uhi, wi, out=vlr)
    np.subtract(vhr, vlr, out=vhr)  # tr = br wr - bi wi
    np.multiply(uhr, wi, out=vhi)
    np.multiply(uhi, wr, out=vli)
    np.add(vhi, vli, out=vhi)  # ti = br wi + bi wr
    np.add(ulr, vhr, out=vlr)  # a + t
    np.subtract(ulr, vhr, out=vhr)  # a - t
    np.add(uli, vhi, out=vli)
    np.subtract(uli, vhi, out=vhi)


def _stage_table(w: np.ndarray, N: int) -> tuple[np.ndarray, np.ndarray]:
    """(re, im), contiguous, length N: entries m .. 2m - 1 are stage m's twiddles w_(2m)^j = w[j N / (2m)], j < m."""
    re, im = np.zeros(N), np.zeros(N)
    m = 1
    while m < N:
        re[m : 2 * m] = w.real[:: N // (2 * m)][:m]
        im[m : 2 * m] = w.imag[:: N // (2 * m)][:m]
        m *= 2
    return re, im


@lru_cache(maxsize=TWIDDLE_CACHE)
def _stage_twiddles(N: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(w, re, im): twiddles(N)'s table and its :func:`_stage_table` (cached per N, read-only)."""
    w = twiddles(N)[0]
    re, im = _stage_table(w, N)
    re.flags.writeable = im.flags.writeable = False
    return w, re, im


@lru_cache(maxsize=TWIDDLE_CACHE)
def _gather_index(N: int, R: int) -> np.ndarray:
    """The bit reversal in the transposed layout: entry (q, g) = bitrev(N)[R g + q], shape (R, N / R). Row q reads
    one contiguous N / R slice of the input (cache-friendly)."""
    G = N // R
    idx = bitrev(R)[:, None] * G + bitrev(G)[None, :]
    idx.flags.writeable = False
    return idx


def _halves(x: np.ndarray, shape: tuple) -> tuple[np.ndarray, np.ndarray]:
    v = x.reshape(shape)
    return v[:, 0], v[:, 1]


def _stage(u: tuple, v: tuple, shape: tuple, wr: np.ndarray, wi: np.ndarray) -> None:
    """One stage's butterflies from u = (re, im) into v: the butterfly halves are axis 1 of ``shape``."""
    ulr, uhr = _halves(u[0], shape)
    uli, uhi = _halves(u[1], shape)
    vlr, vhr = _halves(v[0], shape)
    vli, vhi = _halves(v[1], shape)
    _butterflies(ulr, uli, uhr, uhi, wr, wi, vlr, vli, vhr, vhi)


def _first_pass(z: np.ndarray, pr, pi, ar, ai, R: int, C: int) -> None:
    """Stages m = 1 .. C/2 chunk by chunk (a chunk: C consecutive positions after the bit reversal). Stages m < R
    run in the transposed layout (rows of C / R), then the chunk is transposed back."""
    N = ar.shape[0]
    G, c = N // R, C // R
    Y = z[_gather_index(N, R)]  # Y[q, g] = z[bitrev(N)[R g + q]]
    bufs = [(np.empty(C), np.empty(C)), (np.empty(C), np.empty(C))]
    for c0 in range(0, G, c):
        u, b, m = (Y.real[:, c0 : c0 + c], Y.imag[:, c0 : c0 + c]), 0, 1
        while m < R:  # rows q and q + m, q mod 2m < m: twiddle per row
            _stage(u, bufs[b], (R // (2 * m), 2, m, c), pr[m : 2 * m, None], pi[m : 2 * m, None])
            u, b, m = bufs[b], b ^ 1, 2 * m
        reg = slice(c0 * R, (c0 + c) * R)
        v = (ar[reg], ai[reg]) if m == C else bufs[b]
        for x, y in zip(v, u):
            for q in range(0, R, 16):  # 16 rows at a time: 2.7x faster than the whole transposed copy
                np.copyto(x.reshape(c, R)[:, q : q + 16], y.reshape(R, c)[q : q + 16].T)
        u, b = v, b ^ 1
        while m < C:  # the natural layout
            v = (ar[reg], ai[reg]) if 2 * m == C else bufs[b]
            _stage(u, v, (C // (2 * m), 2, m), pr[m : 2 * m], pi[m : 2 * m])
            u, b, m = v, b ^ 1, 2 * m


def _later_pass(pr, pi, ar, ai, M0: int, s: int, C: int) -> None:
    """Stages m = M0 .. M0 2^(s-1) (s >= 2) by column blocks: the array as (outer, 2^s rows, M0 columns), each
    block (one outer index, all rows, cq columns) through all s stages while in cache."""
    N, R = ar.shape[0], 1 << s
    cq = min(M0, max(C // R, 1))
    A = (ar.reshape(N // (M0 * R), R, M0), ai.reshape(N // (M0 * R), R, M0))
    bufs = [(np.empty((R, cq)), np.empty((R, cq))), (np.empty((R, cq)), np.empty((R, cq)))]
    for o in range(N // (M0 * R)):
        for q0 in range(0, M0, cq):
            g = (A[0][o, :, q0 : q0 + cq], A[1][o, :, q0 : q0 + cq])
            u, b, mm = g, 0, 1
            while mm < R:  # rows r and r + mm: twiddle per (row mod mm, column)
                m = mm * M0
                v = g if 2 * mm == R else bufs[b]
                wr = pr[m : 2 * m].reshape(mm, M0)[:, q0 : q0 + cq]
                wi = pi[m : 2 * m].reshape(mm, M0)[:, q0 : q0 + cq]
                _stage(u, v, (R // (2 * mm), 2, mm, cq), wr, wi)
                u, b, mm = v, b ^ 1, 2 * mm


def fft(z: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Unnormalised DFT y_k = sum_j z_j e^(-2 pi i jk/N) by iterative radix-2 decimation in time, in real float64
    operations (:func:`cmul`'s formula for the twiddle products: bit for bit the same on every IEEE machine).
    Cache-blocked (:func:`_first_pass`, :func:`_later_pass`): every output bit as stage by stage (the reference in
    tests/test_pld_fft_blocked.py). Measured (best of 5, 2-core machine shared) N = 2^16 / 2^18 / 2^20 / 2^22:
    stage by stage 9 / 43 / 240 / 1640 ms, blocked 4.8 / 14 / 56 / 270 ms, np.fft.fft 2.1 / 7.7 / 40 / 217 ms."""
    z = np.asarray(z)
    N = z.shape[0]
    if N < 1 or N & (N - 1):
        raise InputError("N", f"the transform length must be a power of two, got {N}")
    if z.dtype != np.complex128:
        z = z.astype(np.complex128)
    if N == 1:
        return z.copy()
    t = N.bit_length() - 1
    if not w.flags.writeable and w is twiddles(N)[0]:  # the cached table: its stage table too
        if _stage_twiddles(N)[0] is not w:  # twiddles(N) was recomputed after an eviction
            _stage_twiddles.cache_clear()
        pr, pi = _stage_twiddles(N)[1:]
    else:
        pr, pi = _stage_table(w, N)
    ar, ai = np.empty(N), np.empty(N)
    R = min(FFT_ROWS, N)
    # one chunk up to FFT_CHUNK / 8 (call overhead dominates), then chunks of at most N / 4 (measured faster)
    C = N if N <= FFT_CHUNK // 8 else max(min(FFT_CHUNK, N // 4), R)
    if 2 * C == N:  # no later pass of one stage
        C = C // 2 if C // 2 >= R else N
    R = min(R, 1 << ((C.bit_length() - 1) // 2))  # rows of C / R >= R elements
    old = np.setbufsize(FFT_BUFSIZE)
    try:
        _first_pass(z, pr, pi, ar, ai, R, C)
        k = C.bit_length() - 1
        while k < t:
            s = min(FFT_PASS, t - k)
            if t - k - s == 1:  # never a pass of one stage (its blocks would need a copy)
                s = s - 1 if s > 2 else s + 1
            _later_pass(pr, pi, ar, ai, 1 << k, s, FFT_CHUNK)
            k += s
    finally:
        np.setbufsize(old)
    return _join(ar, ai)


def power(x: np.ndarray, T: int) -> np.ndarray:
    """x^T elementwise by binary powering (squarings a * a, and products), in real float64 operations by the
    classical formula (:func:`cmul`; a square's imaginary part 2 fl(ar ai) is exactly fl(ar ai) + fl(ai ar))."""
    result = None
    br, bi = _split(x)
    while True:
        if T & 1:
            if result is None:
                result = (br.copy(), bi.copy())
            else:
                rr, ri = result
                re = rr * br
                re -= ri * bi
                im = rr * bi
                im += ri * br
                result = (re, im)
        T >>= 1
        if not T:
            return _join(*result)
        re = br * br
        re -= bi * bi
        im = br * bi
        im *= 2.0
        br, bi = re, im


def fft_theta(N: int, mu: arb) -> arb:
    """Higham Thm 24.2: theta = t eta / (1 - t eta), eta = mu + gamma_4 (sqrt 2 + mu)."""
    t = N.bit_length() - 1
    eta = mu + arb(gamma(4)) * (arb(2).sqrt() + mu)
    return t * eta / (1 - t * eta)


def _seq_sum(a: np.ndarray) -> float:
    """fl of sum a_i in index order (np.cumsum: a sequential loop, the same bits on every machine, unlike a pairwise
    or vectorised reduction); for m non-negative terms the exact sum is <= the result / (1 - u)^(m - 1)
    (Higham (4.3)-(4.4), barring underflow, which only lowers the computed terms' exact sum below the bound)."""
    s = float(np.cumsum(a)[-1]) if a.size else 0.0
    if not math.isfinite(s):
        raise UndecidedError("a float vector's sum overflowed")
    return s


def norm2_upper(v: np.ndarray) -> arb:
    """Ball >= ||v||_2 from the floats: fl of the squares (one rounding each, or an underflow <= 2^-1075: a^2 <=
    (fl(a^2) + 2^-1075) / (1 - u)) summed in index order (:func:`_seq_sum`), m = the number of real components."""
    a = np.concatenate((v.real, v.imag)) if np.iscomplexobj(v) else np.asarray(v, dtype=float)
    s = _seq_sum(a * a)
    with workprec(PREC):
        uu = _u()
        return ((arb(s) / (1 - uu) ** max(a.size - 1, 0) + a.size * arb(2) ** -1075) / (1 - uu)).sqrt()


def sum_upper(x: np.ndarray) -> arb:
    """Ball >= sum_i x_i of non-negative floats (:func:`_seq_sum`)."""
    x = np.asarray(x, dtype=float)
    s = _seq_sum(x)
    with workprec(PREC):
        return arb(s) / (1 - _u()) ** max(x.size - 1, 0)


def _refine(Xh: np.ndarray, x: np.ndarray, T: int, N: int, e1: arb, Ph: np.ndarray, thr: fmpq) -> tuple[arb, int]:
    """Step 4': recompute in balls (acb, the exact DFT of the float input, then the T-th power) the frequencies
    j <= N/2 whose float |X_hat_j| may exceed r = thr^(1/(T-1)) - e1, write their nearest floats into Ph (the
    frequencies j <= N/2 only: the rest are their mirrors), and return (ball >= the 2-norm of Ph - X^T over those
    frequencies and their mirrors, their number)."""
    from flint import acb, acb_poly

    with workprec(REFINE_PREC):
        uu = _u()
        r = arb(thr) ** (arb(1) / (T - 1)) - e1
        if not r > 0:
            raise UndecidedError("refinement impossible: the forward error is above the threshold's radius")
        cut = -f_up(-(r.lower() ** 2 * (1 - uu) ** 3))
    half = N // 2 + 1
    mag2 = Xh.real[:half] * Xh.real[:half] + Xh.imag[:half] * Xh.imag[:half]
    J = np.nonzero(mag2 > cut)[0]
    if J.size > MAX_REFINED:
        raise UndecidedError(f"the refinement would recompute {J.size} frequencies (at most {MAX_REFINED})")
    nz = np.count_nonzero(np.add.reduceat(x > 0, np.arange(0, x.shape[0], REFINE_BLOCK))) if x.shape[0] else 0
    if J.size * nz > MAX_REFINE_WORK:  # decided before the work: each frequency costs a block evaluation per nonzero block
        raise UndecidedError(f"the refinement would evaluate {J.size} frequencies x {nz} blocks (at most {MAX_REFINE_WORK})")
    err2 = arb(0)
    with workprec(REFINE_PREC):
        # blocks of REFINE_BLOCK terms: a Horner step multiplies a box's radius by up to |Re z| + |Im z| <= sqrt 2
        # (complex balls are rectangles), so one Horner over all n terms would lose up to n / 2 bits; each block's
        # offset power z^(B b) is computed from its exact angle instead
        B = REFINE_BLOCK
        blocks = [(b, acb_poly([acb(float(v)) for v in x[b : b + B]])) for b in range(0, x.shape[0], B) if np.any(x[b : b + B] > 0)]
        for j in J:
            j = int(j)
            z = acb.exp_pi_i(acb(fmpq(-2 * j, N)))
            X = acb(0)
            for b, bp in blocks:
                X += acb.exp_pi_i(acb(fmpq(-2 * ((b * j) % N), N))) * bp(z)
            Pw = X**T
            re, im = nearest(Pw.real), nearest(Pw.imag)
            # upper endpoints of the absolute differences (a squared ball around 0 would reach below 0)
            d2 = abs(arb(re) - Pw.real).upper() ** 2 + abs(arb(im) - Pw.imag).upper() ** 2
            Ph[j] = complex(re, im)
            if 0 < j < N - j:  # its mirror N - j carries the conjugate, the same error
                d2 = 2 * d2
            err2 += d2
        return err2.sqrt(), int(J.size)


def _mirror(half: np.ndarray, N: int) -> np.ndarray:
    """The Hermitian vector of length N whose entries j <= N/2 are ``half`` (the rest: conj of entry N - j)."""
    out = np.empty(N, dtype=np.complex128)
    out[: N // 2 + 1] = half
    out[N // 2 + 1 :] = np.conj(half[1 : N // 2][::-1])
    return out


def sup_upper(v: np.ndarray) -> arb:
    """Ball >= max_j |v_j| from the floats: fl(fl(re^2) + fl(im^2)) >= |v_j|^2 (1 - u)^2 - 2^-1073 (two roundings,
    each relative u or an underflow <= 2^-1075, Higham (2.8))."""
    m2 = float(np.max(v.real * v.real + v.imag * v.imag)) if v.shape[0] else 0.0
    if not math.isfinite(m2):
        raise UndecidedError("a float vector's modulus overflowed")
    with workprec(PREC):
        return ((arb(m2) + arb(2) ** -1073) / (1 - _u()) ** 2).sqrt()


def _factor_power(xp: np.ndarray, xo: np.ndarray, c: int, N: int, w: np.ndarray, thr: fmpq, cst: dict) -> tuple[dict, dict, dict, dict]:
    """One factor of :func:`cyclic_product_pair`: its forward transform (steps 3, 3'), separated, and its c-th
    power (step 4, 4' when ``thr`` > 0 and c >= 2), on the frequencies j <= N/2. Returns per side ("p", "o") the
    computed power, the bound D >= ||P_hat - X^c||_2 (full Hermitian vectors), the bound m >= max(||P_hat||_inf,
    ||X^c||_inf), and the number of refined frequencies."""
    half = N // 2 + 1
    z = np.zeros(N, dtype=np.complex128)
    z[: xp.shape[0]] += xp
    z[: xo.shape[0]] += 1j * xo
    Zh = fft(z, w)
    Zr = np.conj(Zh[(-np.arange(half)) % N])  # conj Z_(-j), j <= N/2
    Zh = Zh[:half]
    X = {"p": (Zh + Zr) * 0.5, "o": (Zh - Zr) * (-0.5j)}  # exact: a component swap and sign change after the halving
    theta, uu, sqN, U_fft, nu, U_pow = (cst[k] for k in ("theta", "u", "sqN", "U_fft", "nu", "U_pow"))
    with workprec(PREC):
        n2 = {k: norm2_upper(x) for k, x in (("p", xp), ("o", xo))}  # upper bounds suffice: ||x||_2, sum x (S)
        S = {k: sum_upper(x) for k, x in (("p", xp), ("o", xo))}
        eF = theta * sqN * (n2["p"] ** 2 + n2["o"] ** 2).sqrt() + U_fft
    P, D, m, refined = {}, {}, {}, {}
    for k, x in (("p", xp), ("o", xo)):
        P[k] = power(X[k], c) if c > 1 else X[k]
        with workprec(PREC):
            e1 = eF + uu * (sqN * n2[k] + eF)
            BT1 = (S[k] + e1) ** (c - 1)  # >= (|X_hat_j| + e_j)^(c-1) for every j
            if thr > 0 and c >= 2 and not BT1 <= arb(thr):
                errJ, refined[k] = _refine(X[k], x, c, N, e1, P[k], thr)
                b = arb(thr)
            else:
                errJ, refined[k], b = arb(0), 0, BT1
            D[k] = c * b * e1 + ((1 + nu) ** (c - 1) - 1) * b * (sqN * n2[k] + e1) + errJ + U_pow
            m[k] = sup_upper(P[k]).max(S[k] ** c)
    return P, D, m, refined


def cyclic_product_pair(xs: list, N: int, thr: fmpq = REFINE_THRESHOLD) -> tuple[np.ndarray, np.ndarray, arb, dict]:
    """(N y_hat_p, N y_hat_o, E, parts): the float cyclic convolutions prod_k x_k^(*c_k) of the factors ``xs`` =
    [(xp_k, xo_k, c_k)] (non-negative float vectors of length <= N, counts c_k >= 1, T = sum c_k >= 2; pessimistic
    and optimistic side), and a ball E with |y_hat - y*| <= E for every coefficient of either side (steps 3-5, the
    product of the factors' powers: step 4''). ``thr`` > 0: step 4' with that threshold for every factor with
    c_k >= 2; 0: the plain bound of step 4."""
    if not xs or any(not isinstance(c, int) or c < 1 for *_, c in xs):
        raise InputError("counts", "every factor needs an integer count >= 1")
    T = sum(c for *_, c in xs)
    if not (2 <= T < 2**62):
        raise InputError("steps", f"the FFT composition needs 2 <= T < 2^62 in all, got {T}")
    if any(max(xp.shape[0], xo.shape[0]) > N for xp, xo, _ in xs):
        raise InputError("N", "a factor is longer than the transform")
    w, mu = twiddles(N)
    t = N.bit_length() - 1
    with workprec(PREC):
        cst = {"theta": fft_theta(N, mu), "u": _u(), "sqN": arb(N).sqrt(), "U_fft": t * N * arb(2) ** -1071}
        cst["nu"] = arb(2).sqrt() * arb(gamma(2))
        cst["U_pow"] = cst["sqN"] * arb(2) ** -944
    Q, Ds, ms, refined = {}, {"p": [], "o": []}, {"p": [], "o": []}, {"p": 0, "o": 0}
    for xp, xo, c in xs:
        P, D, m, ref = _factor_power(xp, xo, c, N, w, thr, cst)
        for k in ("p", "o"):
            Q[k] = P[k] if k not in Q else cmul(Q[k], P[k])  # step 4'': the factors' powers multiplied pointwise
            Ds[k].append(D[k])
            ms[k].append(m[k])
            refined[k] += ref[k]
    Qf = {k: _mirror(Q[k], N) for k in Q}
    nf = len(xs)
    with workprec(PREC):
        uu, sqN, nu = cst["u"], cst["sqN"], cst["nu"]
        rc = (1 + nu) ** (nf - 1) - 1
        D = {}
        for k in ("p", "o"):
            lead = arb(1)
            for v in ms[k]:
                lead *= v.max(arb(1))
            prop = sum((Ds[k][i] * _prod_except(ms[k], i) for i in range(nf)), arb(0))
            U_comb = sqN * (nf - 1) * arb(2) ** -1071 * lead * (1 + nu) ** nf
            D[k] = prop + rc / (1 - rc) * norm2_upper(Qf[k]) + U_comb
    Wh = Qf["p"] + 1j * Qf["o"]
    if not np.all(np.isfinite(Wh)):
        raise UndecidedError("the pointwise powers overflowed")
    Y = np.conj(fft(np.conj(Wh), w))
    with workprec(PREC):
        DW = uu * (norm2_upper(Qf["p"]) + norm2_upper(Qf["o"]))
        E = (D["p"] + D["o"] + DW + cst["theta"] * norm2_upper(Wh)) / sqN + cst["U_fft"] / N
    parts = {"theta": cst["theta"], "mu": mu, "D_p": D["p"], "D_o": D["o"], "E": E, "refined": refined}
    return Y.real.copy(), Y.imag.copy(), E, parts


def _prod_except(ms: list, i: int) -> arb:
    out = arb(1)
    for j, v in enumerate(ms):
        if j != i:
            out *= v
    return out


# ------------------------------------------------------------------------------------------------
# Input measures
# ------------------------------------------------------------------------------------------------
#: the last few results of :func:`_common`, keyed by the identity of the measures (kept alive beside the result, so
#: an identity is never reused while cached): a plan and its composition read the same measures
_COMMON: dict = {}


def _common(pess: Pld, opt: Pld) -> tuple[int, list[int], list[int]]:
    """(o, masses_p, masses_o): both measures' integer masses on the common index base o (step 0)."""
    hit = _COMMON.get((id(pess), id(opt)))
    if hit is not None and hit[0] is pess and hit[1] is opt:
        return hit[2]
    out = _common_of(pess, opt)
    if len(_COMMON) >= 8:
        _COMMON.pop(next(iter(_COMMON)))
    _COMMON[(id(pess), id(opt))] = (pess, opt, out)
    return out


def _common_of(pess: Pld, opt: Pld) -> tuple[int, list[int], list[int]]:
    if not (isinstance(pess, Pld) and isinstance(opt, Pld)):
        raise InputError("measures", "expected two certify.pld.compose.Pld measures")
    if not pess.pessimistic or opt.pessimistic:
        raise InputError("measures", "expected a pessimistic and an optimistic measure, in this order")
    if pess.K != opt.K:
        raise InputError("measures", f"the two measures have different units 2^-K ({pess.K}, {opt.K})")
    if pess.atoms == 0 or opt.atoms == 0:
        raise InputError("measures", "a measure without finite atoms")
    o = min(pess.offset, opt.offset)
    n = max(pess.offset + pess.atoms, opt.offset + opt.atoms) - o
    out = []
    for p in (pess, opt):
        c = [0] * (p.offset - o) + [int(v) for v in p.poly.coeffs()]
        if min(c) < 0:
            raise InputError("measures", "negative masses")
        out.append(c + [0] * (n - len(c)))
    return o, out[0], out[1]


@dataclass(frozen=True)
class _Factor:
    """One factor of a product (step 0): the common base o, the integer masses of both measures, the count."""

    o: int
    mp: list
    mo: list
    count: int
    inf: int  # the pessimistic measure's +inf mass


def _factors(factors) -> tuple[list[_Factor], int]:
    """(factors, K) from [(pessimistic Pld, optimistic Pld, count >= 1)]; InputError otherwise."""
    if not isinstance(factors, (list, tuple)) or not factors:
        raise InputError("measures", "expected a nonempty list of (pessimistic, optimistic, count)")
    out, Ks = [], set()
    for f in factors:
        if not (isinstance(f, tuple) and len(f) == 3):
            raise InputError("measures", "each factor is a tuple (pessimistic Pld, optimistic Pld, count)")
        pess, opt, c = f
        if isinstance(c, bool) or not isinstance(c, int) or c < 1:
            raise InputError("counts", f"a factor's count must be an integer >= 1, got {c!r}"[:200])
        o, mp, mo = _common(pess, opt)
        out.append(_Factor(o, mp, mo, c, int(pess.inf)))
        Ks.add(pess.K)
    if len(Ks) != 1:
        raise InputError("measures", f"the factors have different units 2^-K ({sorted(Ks)})")
    return out, Ks.pop()


class _LogMgf:
    """Float log G(s) = sum_k c_k log sum_i x_ki e^(s i) of a product of factors, from float log-weights
    [(indices, log weights, count)] (choices only); ``mean`` its derivative (the mean index of the tilted product)."""

    def __init__(self, parts: list):
        self.parts = parts

    def __call__(self, s: float) -> float:
        out = 0.0
        for i, lx, c in self.parts:
            a = lx + s * i
            mx = a.max()
            out += c * float(mx + math.log(np.exp(a - mx).sum()))
        return out

    def mean(self, s: float) -> float:
        out = 0.0
        for i, lx, c in self.parts:
            a = lx + s * i
            e = np.exp(a - a.max())
            out += c * float((e * i).sum() / e.sum())
        return out


def _best_s(g: _LogMgf, b: float, upper: bool) -> float:
    """A float search for the Chernoff s >= 0 minimising log G(+-s) -+ s b (convex in s; its derivative
    mean(+-s) -+ b is monotone: bisection). A choice: any s >= 0 gives a bound."""
    sign = 1.0 if upper else -1.0
    d = lambda s: sign * (g.mean(sign * s) - b)  # noqa: E731  derivative in s
    if d(0.0) >= 0:
        return 0.0
    lo, hi = 0.0, 1.0
    while d(hi) < 0 and hi < 1e3:
        lo, hi = hi, 2 * hi
    for _ in range(30):  # 2^-30 of the bracket: the bound's exponent is flat at its minimum
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if d(mid) < 0 else (lo, mid)
    return hi


# ------------------------------------------------------------------------------------------------
# The plan: every float choice, as exact numbers
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FftPlan:
    """The choices of one FFT composition (exact; soundness never depends on them, only the tightness).

    ``T`` the total count (steps) at grid ``h``; ``base`` the index of the product's first atom (sum_k c_k o_k over
    the factors, o_k a factor's common index base: loss base h); ``lam`` the tilt (a dyadic rational); ``N`` the
    transform length; ``a`` the window start (linear index of the product, loss (base + a) h); ``j0``, ``j1`` the
    read-off range of window positions; ``threshold`` of the refinement (0: the plain bound); ``s_alias_hi`` /
    ``s_alias_lo`` the Chernoff parameters of the optimistic alias bound A, ``s_top`` the one of the mass above
    the range (untilted pessimistic measures)."""

    T: int
    h: fmpq
    base: int
    lam: fmpq
    N: int
    a: int
    j0: int
    j1: int
    threshold: fmpq
    s_alias_hi: fmpq
    s_alias_lo: fmpq
    s_top: fmpq

    def to_json(self) -> dict:
        return {k: (str(v) if isinstance(v, fmpq) else v) for k, v in self.__dict__.items()}


def _log_masses(m: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(indices, log masses) of the nonzero integer masses (floats; choices only)."""
    idx = [i for i, v in enumerate(m) if v]
    return np.array(idx, dtype=float), np.array([math.log(m[i]) for i in idx])


def _saddle(parts: list, K: int, h: float, delta: float) -> tuple[float, float, float]:
    """(lambda, mean, var) of the tilted product law (in loss units; mean and var summed over the factors' c_k
    copies) at the float saddle point sum_k c_k (K_k - lambda K_k') = log delta (step 1; a choice). ``parts``:
    [(indices, log masses, o, c)]."""

    def stats(lam):
        Kv = m1 = v = 0.0
        for idx, lm, o, c in parts:
            ell = (o + idx) * h
            a = lam * ell + lm - K * math.log(2)
            mx = a.max()
            e = np.exp(a - mx)
            Z = e.sum()
            mean = (e * ell).sum() / Z
            Kv += c * float(mx + math.log(Z))
            m1 += c * float(mean)
            v += c * float((e * (ell - mean) ** 2).sum() / Z)
        return Kv, m1, v

    def above(lam) -> bool:  # sum_k c_k (K_k - lam K_k') > log delta: the tilt is still too small
        Kv, m1, _ = stats(lam)
        return Kv - lam * m1 > target

    target = math.log(delta)
    lo, hi = 0.0, 1.0
    while (up := above(hi)) and hi < 1e4:
        hi *= 2
    if up:  # the left side tends to log(mass at the largest loss) as lambda grows
        raise UndecidedError("no tilt reaches delta: the largest composed loss carries about delta or more (use the exact products)")
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if above(mid) else (lo, mid)
    _, m1, v = stats(hi)
    return hi, m1, v


def refine_threshold(T: int) -> fmpq:
    """The plan's refinement threshold 2^-k (a choice): the plain part of the bound grows like T thr e1 (step 4'),
    so fewer steps afford a larger threshold and fewer frequencies recomputed in balls: k = 10 from 1e6 steps on,
    one less per halving of T below, at least 4 (T = 1e4: k = 4, about 10 frequencies per side instead of 15, the
    bracket unchanged to 7 digits; T = 1e5: k = 7, 0.01% wider than at k = 10)."""
    k = 10 - max(0, int(math.log2(10**6 / T))) if T < 10**6 else 10
    return fmpq(1, 2 ** max(4, k))


def default_threshold(counts: list[int]) -> fmpq:
    """The plan's refinement threshold when none is given: for one factor of count T >= REFINE_MIN_STEPS,
    :func:`refine_threshold` (T); else 0 (the plain bound). A product of several factors is not refined: each factor
    is powered to a fraction of T, so its |X_j|^(c - 1) stays above the threshold at many more frequencies (measured:
    the benchmark's 1000-event ledger at grid 1e-4 would recompute 15,205 frequencies in balls, 9.7 s instead of
    1.2 s, for a bracket 7e-7 narrower at eps = 4.597)."""
    if len(counts) == 1 and counts[0] >= REFINE_MIN_STEPS:
        return refine_threshold(counts[0])
    return fmpq(0)


def fft_plan(factors, delta: fmpq, h: fmpq, threshold: fmpq | None = None) -> FftPlan:
    """Every float choice of the FFT composition of the product of ``factors`` = [(pessimistic, optimistic one-step
    measures, count)] (one factor (pess, opt, T): the T-fold product) for a target ``delta`` at grid ``h``
    (module docstring, steps 1, 2, 6, 7), returned exactly. ``threshold`` None: :func:`default_threshold`."""
    fs, K = _factors(factors)
    T = sum(f.count for f in fs)
    if not (2 <= T < 2**62):
        raise InputError("steps", f"the FFT composition needs 2 <= T < 2^62 steps in all, got {T}")
    if threshold is None:
        threshold = default_threshold([f.count for f in fs])
    if not (0 < delta < 1) or not h > 0:
        raise InputError("delta", "needs 0 < delta < 1 and a grid h > 0")
    if threshold < 0 or threshold >= 1:
        raise InputError("threshold", f"must be in [0, 1), got {threshold}")
    hf = float(h)
    base = sum(f.count * f.o for f in fs)
    n = max(len(f.mp) for f in fs)
    lp = [_log_masses(f.mp) for f in fs]
    lam_f, mean, var = _saddle([(i, lm, f.o, f.count) for (i, lm), f in zip(lp, fs)], K, hf, float(delta))
    lam_f = choice(lam_f)
    lam = dyadic(lam_f)
    lo_ = [_log_masses(f.mo) for f in fs]
    # the tilted vectors (up to normalisation), indexed from each factor's base
    g_o = _LogMgf([(i, lm + lam_f * hf * i, f.count) for (i, lm), f in zip(lo_, fs)])
    g_p = _LogMgf([(i, lm + lam_f * hf * i, f.count) for (i, lm), f in zip(lp, fs)])
    centre = int(round(mean / hf)) - base  # linear index of the tilted mean
    N = 1 << max(n - 1, 1).bit_length()
    if N > MAX_N:
        raise InputError("--grid", f"one step has {n} atoms: the transform would exceed {MAX_N} points; use a coarser grid")
    while True:  # the smallest power of two whose window's float Chernoff estimate of A is below ALIAS_TARGET
        a = centre - N // 2
        est = 0.0
        for g in (g_p, g_o):
            for b, up in ((a + N, True), (a - 1, False)):
                s = _best_s(g, float(b), up)
                est += math.exp(min(0.0, g(s if up else -s) - g(0.0) - (s * b if up else -s * b)))
        if est <= ALIAS_TARGET or 2 * N > MAX_N:
            break
        N *= 2
    a = centre - N // 2
    sd = math.sqrt(var) / hf
    j0 = max(0, int(centre - a - RANGE_SDS * sd))
    j1 = min(N, j0 + int(650 / ((lam_f + 1) * hf)))
    if j1 <= j0:
        raise InputError("--grid", "the read-off range is empty at this grid and tilt")
    s_hi = _best_s(g_o, float(a + N), True)
    s_lo = _best_s(g_o, float(a - 1), False)
    # the untilted pessimistic measures' mass at losses >= L_(a+j1): s by a ternary search (convex exponent)
    Lb = (base + a + j1) * hf
    ells = [((f.o + i) * hf, lm - K * math.log(2), f.count) for (i, lm), f in zip(lp, fs)]

    def f(sv):
        out = -sv * Lb
        for ell, lpk, c in ells:
            x = lpk + sv * ell
            mx = x.max()
            out += c * float(mx + math.log(np.exp(x - mx).sum()))
        return out

    lo, hi = 0.0, max(4 * lam_f, 1.0)
    for _ in range(50):  # (2/3)^50 < 2^-29 of the interval
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if f(m1) < f(m2):
            hi = m2
        else:
            lo = m1
    s_top = (lo + hi) / 2
    return FftPlan(T, h, base, lam, N, a, j0, j1, threshold, dyadic(choice(s_hi)), dyadic(choice(s_lo)), dyadic(choice(s_top)))


# ------------------------------------------------------------------------------------------------
# Tilt and Chernoff in balls
# ------------------------------------------------------------------------------------------------
#: a tilted mass below this is not convolved as a float (step 1': moved up, or dropped)
TINY = 2.0**-1000
#: the tilted floats are formed in blocks of this many atoms, each from one anchor decided in balls (step 1)
TILT_BLOCK = 64


def _tilt_sum(m: list[int], o: int, K: int, lam: fmpq, h: fmpq) -> arb:
    """Ball of sum_i m_i 2^-K e^(lam (o + i) h): the integer polynomial of the masses evaluated at the ball
    e^(lam h) (FLINT, deterministic), times e^(lam h o) 2^-K."""
    from flint import arb_poly, fmpz_poly

    e = arb(lam) * arb(h)
    return arb_poly(fmpz_poly(m))(e.exp()) * (e * o).exp() * arb(2) ** -K


def tilted(m: list[int], o: int, K: int, lam: fmpq, h: fmpq, pessimistic: bool) -> tuple[np.ndarray, float, arb, list[int], int]:
    """(x, Z0, rho, m', moved): floats x_i with |x_i - t_i| <= rho x_i, t_i = m'_i 2^-K e^(lam l_i) / Z0 (step 1).

    Z0: the float nearest to the ball of sum_i m'_i 2^-K e^(lam l_i) (:func:`_tilt_sum`; any float is sound, it is
    used exactly). The floats, in blocks of B = TILT_BLOCK atoms from b: x_i = fl(fl(m_i 2^-K) fl(A_b g_(i-b))), A_b
    the float nearest to the ball of e^(lam h (o + b)) / Z0 (relative error <= eA, decided in balls; m_i 2^-K >= 2^-K
    is a normal float for K <= MAX_K, so the scaling is exact),
    g_j the powers of r = the float nearest to e^(lam h) by binary doubling (:func:`geometric`: at most j roundings;
    |r - e^(lam h)| <= rho_r e^(lam h) decided in balls), every product a normal float (else the atom counts as tiny,
    below). So x_i = t_i (1 + d) with |d| <= eps := (1 + u)^(B + 2) (1 + rho_r)^B (1 + eA) - 1 (m_i -> float and the
    two products: one rounding each; 2^-K is exact), and |x_i - t_i| <= rho x_i with rho = eps / (1 - eps). Measured:
    rho about 70 u (nearest floats of balls: about u), so (1 + rho)^T moves delta by 1e-8 relative at T = 1e6.

    Step 1' (tiny tilted masses). Where x_i is not certainly above TINY (far below the tilt's bulk), the
    atom's mass is changed first: pessimistic measures move it UP to the next atom that is kept (or to +inf above
    the last; ``moved`` counts those units), optimistic ones drop it. Both only move the measure's curve
    m_inf + sum m_i (1 - gamma e^(-l_i))_+ in the intended direction at every gamma >= 0 (non-decreasing in
    every l_i and m_i), so the changed one-step measure still bounds the one-step curve (Zhu-Dong-Wang Thm 10
    then composes it); which atoms are moved is a choice. Repeated until no kept mass is tiny."""
    m = list(m)
    n = len(m)
    # a block's powers r^j stay normal floats: r^(B-1) within 2^-900 .. 2^900 (a large tilt at few steps: small blocks)
    B = max(1, min(TILT_BLOCK, int(900 / max(float(lam * h) / math.log(2), 1e-300)) + 1))
    to_inf = 0
    with workprec(PREC):
        uu = _u()
        rb = (arb(lam) * arb(h)).exp()
        r = nearest(rb)
        rho_r = abs(arb(r) - rb) / rb
        g = geometric(r, B)
        if not (np.all(np.isfinite(g)) and g[-1] >= 2.0**-1000):
            raise UndecidedError("the tilt's powers left the float range")
        for _ in range(64):
            Z0 = nearest(_tilt_sum(m, o, K, lam, h))
            if not (math.isfinite(Z0) and Z0 > TINY):
                raise UndecidedError("the tilted total mass is outside the float range (tilt too large)")
            eA = arb(0)
            anchors = np.empty((n + B - 1) // B)
            for k in range(anchors.shape[0]):
                Ab = (arb(lam) * arb(h) * (o + k * B)).exp() / Z0
                A = nearest(Ab)
                if not (math.isfinite(A) and abs(A) >= 2.0**-1022):
                    A = 0.0  # outside the normal range: the block's atoms count as tiny
                else:
                    eA = eA.max(abs(arb(A) - Ab) / Ab)
                anchors[k] = A
            sc = (anchors[:, None] * g[None, :]).ravel()[:n]
            mf = np.ldexp(np.array([float(v) for v in m]), -K)  # m_i -> float (correctly rounded), times 2^-K exactly
            x = mf * sc
            eps = (1 + uu) ** (B + 2) * (1 + rho_r) ** B * (1 + eA) - 1
            rho = eps / (1 - eps)
            floor = f_up(TINY * (1 + rho))
            kept = (sc >= 2.0**-1022) & np.isfinite(sc) & (x > floor)
            if not np.all(np.isfinite(x[kept])):
                raise UndecidedError("the tilted masses overflowed")
            tiny = np.nonzero((mf > 0) & ~kept)[0]
            if not tiny.size:
                break
            keep_idx = np.nonzero((mf > 0) & kept)[0]
            nxt = np.searchsorted(keep_idx, tiny, side="right")  # the next kept atom above each tiny one
            for i, k in zip(tiny.tolist(), nxt.tolist()):
                if pessimistic:
                    if k == keep_idx.shape[0]:
                        to_inf += m[i]
                    else:
                        m[int(keep_idx[k])] += m[i]
                m[i] = 0
        else:
            raise UndecidedError("the tilted masses did not settle")
        x = np.where(mf > 0, x, 0.0)
        rho = arb(f_up(rho))
    return x, Z0, rho, m, to_inf


def chernoff_tail(xs: list, b: int, upper: bool, s: fmpq) -> arb:
    """Ball bound on the mass of the product prod_k x_k^(*c_k) (``xs`` = [(x_k, c_k)], each x_k indexed from 0) at
    indices >= b (upper) or <= b (lower), any s >= 0: prod_k G_k(+-s)^(c_k) e^(-+s b) (Markov on e^(+-s K), K the
    sum of the independent indices)."""
    from flint import arb_poly

    with workprec(PREC):
        sgn = 1 if upper else -1
        r = (arb(s) * sgn).exp()
        logG = arb(0)
        for x, c in xs:
            logG += c * arb_poly(np.asarray(x, dtype=float).tolist())(r).log()  # G = sum_i x_i r^i (floats are exact balls)
        return (logG - sgn * arb(s) * b).exp()


def untilted_upper_tail(ms: list, K: int, h: fmpq, Lb: fmpq, s: fmpq) -> arb:
    """Ball bound on the product's finite mass at losses >= Lb, ``ms`` = [(integer masses m_k, base o_k, c_k)]:
    prod_k (sum_i m_ki 2^-K e^(s l_ki))^(c_k) e^(-s Lb)."""
    with workprec(PREC):
        logG = arb(0)
        for m, o, c in ms:
            logG += c * _tilt_sum(m, o, K, s, h).log()  # the same sum as the tilt's, at s
        return (logG - arb(s) * arb(Lb)).exp()


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


class _Side:
    """Suffix sums S1(k0), S2(k0) of a range of non-negative float masses (times N) and their constants."""

    def __init__(self, masses: np.ndarray, lam: fmpq, h: fmpq):
        n = masses.shape[0]
        with workprec(PREC):
            r1b, r2b = (-arb(lam) * arb(h)).exp(), (-(arb(lam) + 1) * arb(h)).exp()
            r1, r2 = nearest(r1b), nearest(r2b)
            self.rho1 = arb(f_up(abs(r1b - r1) / r1b))
            self.rho2 = arb(f_up(abs(r2b - r2) / r2b))
        g1, g2 = geometric(r1, n), geometric(r2, n)
        if not (g2[-1] > 2.0**-1000 and g1[-1] > 2.0**-1000):
            raise UndecidedError("the read-off range is too long for this tilt (weights underflow)")
        self.s1 = np.cumsum((masses * g1)[::-1])[::-1]
        self.s2 = np.cumsum((masses * g2)[::-1])[::-1]
        if not (np.all(np.isfinite(self.s1)) and np.all(np.isfinite(self.s2))):
            raise UndecidedError("the read-off sums overflowed")
        self.n = n

    def window(self, k0: int, e: arb, upper: bool) -> arb:
        """Ball containing a bound (upper or lower) of S1(k0) - e S2(k0) for the exact masses (step 7)."""
        if k0 >= self.n:
            return arb(0)
        m = 2 * self.n + 2
        uu = _u()
        up_f, lo_f = (1 - uu) ** (-m), (1 + uu) ** (-m)
        s1, s2 = arb(float(self.s1[k0])), arb(float(self.s2[k0]))
        n = self.n
        if upper:
            return s1 * up_f / (1 - self.rho1) ** n - e * s2 * lo_f / (1 + self.rho2) ** n
        return s1 * lo_f / (1 + self.rho1) ** n - e * s2 * up_f / (1 - self.rho2) ** n


@dataclass(eq=False)
class FftDirection:
    """One side of an FFT composition, read off like a composed measure (:func:`certify.pld.readoff.delta_at`).

    ``pessimistic``: the upper endpoint of :meth:`delta_at` bounds the T-fold product's delta(eps) from above for
    eps >= ``La`` (below: a non-finite ball); optimistic: the lower endpoint bounds it from below, every eps."""

    pessimistic: bool
    plan: FftPlan
    La: fmpq  # L_(a+j0): the lower edge of the read-off range
    Ltop: fmpq  # L_(a+j1): mass above goes to +inf (pessimistic) or is dropped (optimistic)
    side: _Side
    C: arb  # the constant of step 7 (tilt, normalisation, 1/N, rho)
    extra: arb  # pessimistic: +inf mass of the T-fold product + Chernoff mass above Ltop; optimistic: 0
    E: arb  # the coefficient error bound of step 5 (tilted, normalised units)
    parts: dict = field(default_factory=dict)

    def max_loss(self, h: fmpq) -> fmpq:
        return self.Ltop

    def k0(self, eps: fmpq) -> int:
        """First read-off position j (window position j0 + j) with L_(a+j0+j) > eps."""
        pl = self.plan
        base = pl.base + pl.a + pl.j0
        return max(int((eps / pl.h - base).floor()) + 1, 0)

    def delta_at(self, eps: fmpq, h: fmpq) -> arb:
        """Ball of the bound at an exact eps (module docstring, step 7)."""
        if h != self.plan.h:
            raise InputError("grid", f"this FFT composition is at grid {self.plan.h}, not {h}")
        if self.pessimistic and eps < self.La:
            return arb(0, math.inf)  # below the read-off range: undecided (contains every number)
        with workprec(PREC):
            e = (arb(eps) - arb(self.La)).exp()
            w = self.side.window(self.k0(eps), e, self.pessimistic)
            v = self.extra + self.C * w
            if self.pessimistic:
                return v
            return v if v.lower() > 0 else arb(0)


def delta_bound(d: FftDirection, eps: fmpq, h: fmpq) -> arb:
    """:meth:`FftDirection.delta_at`, refusing (UndecidedError) where it is not finite (eps below the range)."""
    v = d.delta_at(eps, h)
    if not v.is_finite():
        raise UndecidedError(f"eps = {eps} is below the FFT read-off range (its lower edge is {d.La})")
    return v


# ------------------------------------------------------------------------------------------------
# The pipeline
# ------------------------------------------------------------------------------------------------
def compose_pair(factors, plan: FftPlan) -> tuple[FftDirection, FftDirection]:
    """(pessimistic, optimistic) read-off directions of the products of ``factors`` = [(pessimistic, optimistic
    one-step measures, count)] by the plan (deterministic given the plan; module docstring, steps 1-7)."""
    fs, K = _factors(factors)
    T = sum(f.count for f in fs)
    if T != plan.T or sum(f.count * f.o for f in fs) != plan.base or max(len(f.mp) for f in fs) > plan.N:
        raise InputError("plan", "the plan was made for other one-step measures")
    if not plan.lam > 0:
        raise InputError("plan", "the tilt must be positive")
    N, a, j0, j1, h, base = plan.N, plan.a, plan.j0, plan.j1, plan.h, plan.base
    if not (0 <= j0 < j1 <= N):
        raise InputError("plan", "the read-off range must satisfy 0 <= j0 < j1 <= N")
    tp = [tilted(f.mp, f.o, K, plan.lam, h, True) for f in fs]  # (x, Z0, rho, m', moved to +inf)
    to = [tilted(f.mo, f.o, K, plan.lam, h, False) for f in fs]
    Yp, Yo, E, parts = cyclic_product_pair([(p[0], o[0], f.count) for p, o, f in zip(tp, to, fs)], N, plan.threshold)
    with workprec(PREC):
        xo = [(o[0], f.count) for o, f in zip(to, fs)]
        A = chernoff_tail(xo, a + N, True, plan.s_alias_hi) + chernoff_tail(xo, a - 1, False, plan.s_alias_lo)
        shift = a % N
        Yp, Yo = np.roll(Yp, -shift), np.roll(Yo, -shift)  # window position j <-> linear index a + j
        cE = f_up(N * E)
        cEA = f_up(N * (E + A))
        Up = np.maximum(Yp, 0.0) + cE  # one rounding each (counted in _Side.window's m)
        Lo = np.maximum(Yo - cEA, 0.0)  # true N x_k >= Lo_k / (1 + u) where positive
        La = (base + a + j0) * h
        Ltop = (base + a + j1) * h
        uu = _u()
        tiltLa = (-arb(plan.lam) * arb(La)).exp()
        Cp, Co, Mt, Ft = tiltLa / N, tiltLa / N / (1 + uu), arb(1), arb(1)
        scale = arb(2) ** -K
        for p, o, f in zip(tp, to, fs):
            Cp *= ((1 + p[2]) * arb(p[1])) ** f.count
            Co *= ((1 - o[2]) * arb(o[1])) ** f.count
            F = sum(p[3])
            Mt *= (arb(F + f.inf + p[4]) * scale) ** f.count
            Ft *= (arb(F) * scale) ** f.count
        inf_T = Mt - Ft  # the +inf mass of the product: total minus finite (exact in balls)
        above = untilted_upper_tail([(p[3], f.o, f.count) for p, f in zip(tp, fs)], K, h, Ltop, plan.s_top)
        moved = sum(p[4] for p in tp)
        parts = dict(parts, A=A, inf_T=inf_T, above=above, moved_to_inf=moved)
        up = FftDirection(True, plan, La, Ltop, _Side(Up[j0:j1], plan.lam, h), Cp, inf_T + above, E, parts)
        lo = FftDirection(False, plan, La, Ltop, _Side(Lo[j0:j1], plan.lam, h), Co, arb(0), E, parts)
    return up, lo


def compose(factors, delta: fmpq, h: fmpq) -> tuple[FftDirection, FftDirection, FftPlan]:
    """(pessimistic, optimistic, plan): :func:`fft_plan` then :func:`compose_pair` (the plan is returned so that
    a certificate can record it and a checker re-run :func:`compose_pair` with it)."""
    fp = fft_plan(factors, delta, h)
    up, lo = compose_pair(factors, fp)
    return up, lo, fp


def directions(contract, q: fmpq, sigma: fmpq, T: int, delta: fmpq, h: fmpq, threshold: fmpq | None = None) -> dict:
    """{direction name: (pessimistic, optimistic) FftDirection} for every direction of ``contract`` (Poisson
    add/remove: ``remove`` and ``add``, each from its own one-step measures, :func:`certify.pld.accountant.plan`
    with ``derive_add=False`` and :func:`certify.pld.accountant.run` with one step; fixed-size: ``max``). The
    worst-direction curve is the max over directions."""
    from .accountant import plan as pld_plan, run
    from .compose import from_one_step

    pl = pld_plan(contract, q, sigma, T, delta, h, derive_add=False)
    r = run(contract, q, sigma, 1, pl)
    out = {}
    for name in pl.layouts:
        pess, opt = from_one_step(r.one_step[(name, True)]), from_one_step(r.one_step[(name, False)])
        f = [(pess, opt, T)]
        out[name] = compose_pair(f, fft_plan(f, delta, h, threshold))
    return out


def bracket(contract, q, sigma, T, delta, h) -> tuple[fmpq, fmpq]:
    """Certified [eps_low, eps_up] of the composed pair's worst-direction eps(delta) by the FFT composition
    (inputs parsed as :func:`certify.pld.certify_pld` parses them): eps_up with every direction's upper bound
    <= delta (:func:`certify.pld.readoff.epsilon_pass`), eps_low with some direction's lower bound > delta."""
    from . import _parse, readoff
    from .accountant import parse_pld_delta

    c, qq, ss, TT, hh = _parse(contract, q, sigma, T, h)
    if hh is None:
        raise InputError("--grid", "the FFT composition needs a grid")
    dd = parse_pld_delta(delta)
    if TT < 2:
        raise InputError("--steps", "the FFT composition needs at least 2 steps")
    dirs = directions(c, qq, ss, TT, dd, hh)
    ups = [v[0] for v in dirs.values()]
    lows = [v[1] for v in dirs.values()]
    with workprec(PREC):
        up = readoff.epsilon_pass(ups, dd, hh)
        if up is None:
            raise UndecidedError("no eps in the FFT read-off range passes")
        lo = readoff.epsilon_fail(lows, dd, hh, up)
    return lo, up
