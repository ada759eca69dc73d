"""Benchmark: one product of the certified PLD's composition, FLINT's exact ``fmpz_poly`` product against an
exact product through numpy's float FFT (limb splitting), at the sizes of the benchmark's chains.

Usage:  python benchmarks/bench_pld_products.py [--atoms 20000,80000,300000] [--bits 66] [--runs 3]

The question (issue 24, item 1): can a float FFT with a proven a-priori error bound below 1/2 replace
FLINT's product and keep every product bit-identical? The float route, as measured here:

* split each coefficient (``bits`` bits, nonnegative) into L limbs of b bits; the product is the 2-D
  convolution of the limb arrays, c_k = sum_m 2^(b m) e_k^(m) with e^(m) = sum_(j+l=m) a_(.j) * b_(.l);
* compute the e^(m) by numpy's real FFT (pocketfft): L forward transforms per operand (L for a square),
  L^2 (or L(L+1)/2) pointwise products summed per m, 2L - 1 inverse transforms, round to the nearest integer;
* the limb size b must make an a-priori bound on the float convolution's error below 1/2. The bounds have
  the form |e^ - e|_inf <= c log2(N) u |x|_2 |y|_2 (u = 2^-53, N the transform length): Higham 2002, Thm 24.2,
  for a radix-2 Cooley-Tukey transform with twiddles accurate to mu, bounds its relative 2-norm error by
  log2(N) eta / (1 - log2(N) eta), eta = mu + gamma_4 (sqrt 2 + mu), about 6.7 log2(N) u for mu = u; a
  convolution takes three transforms and a pointwise complex product, so c is well above 1 (and pocketfft's
  radix-4 real transforms need an analysis of their own). With |x|_2^2 <= n L 2^(2b), b must satisfy
  n L 2^(2b) c log2(N) u < 1/2. This benchmark takes the limb size that an OPTIMISTIC c = 1 allows (a sound
  constant only lowers b and raises L): where the float route loses at c = 1 it loses at any sound c.

Times: the product alone (arrays already split), and the conversions that python-flint forces (it has no bulk
coefficient import/export: coefficients go through Python ints). The FLINT product is timed as used
(``a * b``, and ``a * a``, which FLINT computes as a square). Each float product is checked equal to FLINT's.
This is a measurement, not part of the accountant: certify's products stay FLINT's (certify/pld/compose.py).
"""

from __future__ import annotations

import argparse
import math
import random
import time

from flint import fmpz_poly


def limb_bits(n: int, bits: int, c: float = 1.0) -> tuple[int, int, int]:
    """(b, L, N): the largest limb size b with n L 2^(2b) c log2(N) 2^-53 < 1/2 (L = ceil(bits / b)), N the
    power-of-two transform length >= 2n - 1."""
    N = 1 << (2 * n - 1).bit_length()
    for b in range(26, 0, -1):
        L = -(-bits // b)
        if n * L * 2.0 ** (2 * b) * c * math.log2(N) * 2.0**-53 < 0.5:
            return b, L, N
    raise ValueError("no limb size fits")


def to_limbs(p: fmpz_poly, b: int, L: int):
    """The L x n float64 array of b-bit limbs of p's (nonnegative) coefficients, through Python ints."""
    import numpy as np

    nbytes = -(-(b * L) // 8)
    buf = b"".join(int(v).to_bytes(nbytes, "little") for v in p.coeffs())
    bitsarr = np.unpackbits(np.frombuffer(buf, np.uint8).reshape(-1, nbytes), axis=1, bitorder="little")[:, : b * L]
    weights = (1 << np.arange(b, dtype=np.int64)).astype(np.float64)
    return (bitsarr.reshape(-1, L, b).astype(np.float64) @ weights).T.copy()


def fft_product(A, B, N: int):
    """The exact limb products e^(m), m = 0..2L-2, as int64 (float FFT, rounded; exact when the bound holds)."""
    import numpy as np

    L, n = A.shape
    FA = np.fft.rfft(A, N, axis=1)
    FB = FA if B is None else np.fft.rfft(B, N, axis=1)
    E = np.zeros((2 * L - 1, FA.shape[1]), complex)
    for j in range(L):
        for k in range(j if B is None else 0, L):
            t = FA[j] * FB[k]
            E[j + k] += t + t if (B is None and k != j) else t
    m = n + (A.shape[1] if B is None else B.shape[1]) - 1
    return np.rint(np.fft.irfft(E, N, axis=1)[:, :m]).astype(np.int64)


def from_limbs(e, b: int) -> fmpz_poly:
    """fmpz_poly with coefficients sum_m e[m] 2^(b m): one polynomial per limb row (python-flint builds a
    polynomial only from a list of Python ints), scaled and added in FLINT."""
    out = fmpz_poly(e[0].tolist())
    for m in range(1, e.shape[0]):
        out += fmpz_poly(e[m].tolist()) * (1 << (b * m))
    return out


def best(f, runs: int) -> tuple[float, object]:
    t, r = math.inf, None
    for _ in range(runs):
        s = time.perf_counter()
        r = f()
        t = min(t, time.perf_counter() - s)
    return t, r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--atoms", default="20000,80000,300000")
    ap.add_argument("--bits", type=int, default=66, help="coefficient bits (the T = 1e4..1e6 chains: 61-67 at K = 74)")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    rng = random.Random(1)
    print(f"one product, {a.bits}-bit coefficients; best of {a.runs}; milliseconds")
    print("atoms | b x L (c = 1) | FLINT a*b | FLINT a*a | FFT a*b | FFT a*a | fmpz_poly -> limbs | limbs -> fmpz_poly")
    for n in [int(float(x)) for x in a.atoms.split(",")]:
        p = fmpz_poly([rng.getrandbits(a.bits) for _ in range(n)])
        q = fmpz_poly([rng.getrandbits(a.bits) for _ in range(n)])
        b, L, N = limb_bits(n, a.bits)
        t_mul, exact_pq = best(lambda: p * q, a.runs)
        t_sqr, exact_pp = best(lambda: p * p, a.runs)
        t_in, P = best(lambda: to_limbs(p, b, L), a.runs)
        Q = to_limbs(q, b, L)
        t_fmul, e_pq = best(lambda: fft_product(P, Q, N), a.runs)
        t_fsqr, e_pp = best(lambda: fft_product(P, None, N), a.runs)
        t_out, got = best(lambda: from_limbs(e_pp, b), 1)
        assert got == exact_pp and from_limbs(e_pq, b) == exact_pq, "float FFT product differs from FLINT's"
        cols = [n, f"{b} x {L}"] + [f"{t * 1e3:.1f}" for t in (t_mul, t_sqr, t_fmul, t_fsqr, t_in, t_out)]
        print(" | ".join(map(str, cols)), flush=True)


if __name__ == "__main__":
    main()
