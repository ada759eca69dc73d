"""The research prototype benchmarks/proto_pld_fft.py (tilted float FFT PLD with an a-priori error bound).

* the float cyclic T-fold convolution against EXACT integer arithmetic (FLINT fmpz_poly powers reduced mod
  x^N - 1): the claimed bound E holds coefficient by coefficient, on random inputs, with wrap-around;
* the twiddles' error bound mu against an independent evaluation (arb's cos_pi / sin_pi of a ball);
* the certified remove-direction bracket at T = 100, grid 1e-3 against certify's exact composition (which
  encloses the truth: the brackets must overlap) and its delta(eps) bounds against the exact T-fold product of
  the same one-step measures (FLINT, no truncation) read off by certify's readoff.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest
from flint import arb, fmpq, fmpz_poly

from certify.balls import workprec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import proto_pld_fft as P  # noqa: E402


def _exact_cyclic(ints: list[int], T: int, N: int) -> list[int]:
    c = fmpz_poly(ints) ** T
    out = [0] * N
    for k, v in enumerate(c.coeffs()):
        out[k % N] += int(v)
    return out


@pytest.mark.parametrize("refine", [False, True])
@pytest.mark.parametrize(
    "seed,n,N,T,norm", [(1, 20, 64, 7, False), (2, 50, 64, 33, False), (3, 5, 256, 100, True), (4, 120, 128, 2, False), (5, 30, 1024, 64, True)]
)
def test_fft_bound_holds_coefficientwise(seed, n, N, T, norm, refine):
    rng = random.Random(seed)
    e = 20  # x_i = k_i 2^-e exactly (floats), so FLINT's integer power is the exact convolution
    kp = [rng.randrange(0, 2**e // n) if rng.random() > 0.3 else 0 for _ in range(n)]
    ko = [rng.randrange(0, 2**e // n) for _ in range(n)]
    kp[0] = kp[0] or 1
    if norm:  # total mass just below 1, as the pipeline's normalised tilted vectors: the low frequencies matter
        kp = [k * 2**e // sum(kp) for k in kp]
        ko = [k * 2**e // sum(ko) for k in ko]
    xp = np.array([k * 2.0**-e for k in kp])
    xo = np.array([k * 2.0**-e for k in ko])
    Yp, Yo, E, parts = P.cyclic_power_pair(xp, xo, T, N, refine=refine)
    assert not (refine and norm) or parts["refined"]["p"] > 0  # the refinement is exercised
    assert E < 1e-9  # a usable bound (the worst case here is 1e-12)
    if refine:
        assert E.upper() <= P.cyclic_power_pair(xp, xo, T, N, refine=False)[2].upper()
    worst = 0.0
    with workprec(P.PREC):
        for Y, ks in ((Yp, kp), (Yo, ko)):
            exact_c = _exact_cyclic(ks, T, N)
            for p in range(N):
                truth = arb(fmpq(exact_c[p], 2 ** (e * T)))
                err = abs(arb(float(Y[p])) / N - truth)
                assert err <= E, (p, err, E)  # decided in balls
                worst = max(worst, float(err.upper().mid()))
    if not refine:  # (refined at small T, every frequency that matters is recomputed in balls: exact results)
        assert worst > 0  # the float result is not exact: E = 0 would fail this test


def test_twiddle_error_bound():
    N = 1024
    w, mu = P.twiddles(N)
    assert mu < arb(2.0**-52)
    with workprec(P.PREC):
        for j in range(N // 2):
            t = arb(fmpq(2 * j, N))
            c, s = t.cos_pi(), t.sin_pi()  # an independent route (ball argument, not sin_cos_pi_fmpq)
            d = ((arb(float(w[j].real)) - c) ** 2 + (arb(float(w[j].imag)) + s) ** 2).sqrt()
            assert d <= mu, (j, d, mu)


def test_fft_matches_numpy():
    rng = np.random.default_rng(0)
    z = rng.random(512) + 1j * rng.random(512)
    w, _ = P.twiddles(512)
    assert np.max(np.abs(P.fft(z, w) - np.fft.fft(z))) < 1e-11


def _exact_readoff(s, T: int, h: fmpq, eps: fmpq) -> arb:
    """delta(eps) of the EXACT T-fold product of a one-step measure (FLINT power, no truncation)."""
    from certify.pld import readoff
    from certify.pld.compose import Pld

    poly = fmpz_poly([int(m) for m in s.masses]) ** T
    F = sum(int(m) for m in s.masses)
    inf = (F + s.inf) ** T - F**T
    with workprec(s.K * T + 128):
        return readoff.delta_at(Pld(poly, s.lo * T, inf, s.K * T, s.pessimistic), eps, h)


@pytest.mark.slow  # about 12 s: the exact untruncated T-fold product
def test_bracket_small_T_against_exact():
    T, grid = 100, "1e-3"
    m = P.FftPld("0.01", "2", T, "1e-6", grid)
    lo, up = m.bracket()
    clo, cup, _ = P.certify_remove_bracket("0.01", "2", T, "1e-6", grid)
    assert lo <= up
    assert up >= clo and lo <= cup  # certify's exact bracket encloses the truth: they must overlap
    assert up - lo <= 2 * (cup - clo)  # and the prototype is about as tight (measured: equal to 1e-6)
    # delta(eps) bounds against the exact T-fold products of the same one-step measures
    sp, so, h = P.one_step_pair("0.01", "2", T, "1e-6", grid)
    for eps in (fmpq(2, 10), lo, up, fmpq(3, 10)):
        ex_up = _exact_readoff(sp, T, h, eps)
        ex_lo = _exact_readoff(so, T, h, eps)
        fu, fl = m.delta_up(eps), m.delta_low(eps)
        assert fu >= ex_up, (eps, fu, ex_up)
        assert fl <= ex_lo, (eps, fl, ex_lo)
        assert fu <= ex_up * (1 + arb(1e-6)) + arb(1e-15)  # tight: the error budget is far below delta
        assert fl >= ex_lo * (1 - arb(1e-6)) - arb(1e-15)
