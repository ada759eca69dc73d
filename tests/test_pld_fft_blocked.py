"""certify.pld.fft.fft, the cache-blocked radix-2 transform: BIT FOR BIT the stage-by-stage transform.

The a-priori bound (Higham Thm 24.2) and every FFT certificate depend on the exact operations per element, so the
blocked transform must give the same bits as the straightforward one on every input. The reference below is the
transform as it was before the blocking (bit reversal, then the stages one after the other over the whole array,
the first ones a column at a time), kept verbatim; outputs are compared as uint64 bit patterns (signed zeros,
subnormals, infinities and NaNs included). A variant with other roundings (Gauss's three-multiplication complex
product) must differ, so the comparison can fail. The blocking parameters are also shrunk, so that every pass
(transposed stages, chunk transposition, natural stages, later passes of two to FFT_PASS stages) runs at small N.

Run as a script for the timings (best of 5): ``PYTHONPATH=$PWD python tests/test_pld_fft_blocked.py``.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from certify.balls import InputError
from certify.pld import fft

SMALL_STAGE = 64


def _reference_fft(z: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The unblocked transform (certify.pld.fft.fft before the cache blocking), verbatim."""
    N = z.shape[0]
    ar, ai = fft._split(z[fft.bitrev(N)])
    wr, wi = fft._split(w)
    tr, ti, tmp = np.empty(N // 2), np.empty(N // 2), np.empty(N // 2)
    m = 1
    while m < min(N, SMALL_STAGE):
        Tr, Ti, X = tr[: N // (2 * m)], ti[: N // (2 * m)], tmp[: N // (2 * m)]
        for j in range(m):
            twr, twi = wr[j * (N // (2 * m))], wi[j * (N // (2 * m))]
            lr, li, hr, hi = ar[j :: 2 * m], ai[j :: 2 * m], ar[m + j :: 2 * m], ai[m + j :: 2 * m]
            np.multiply(hr, twr, out=Tr)
            np.multiply(hi, twi, out=X)
            np.subtract(Tr, X, out=Tr)
            np.multiply(hr, twi, out=Ti)
            np.multiply(hi, twr, out=X)
            np.add(Ti, X, out=Ti)
            np.subtract(lr, Tr, out=hr)
            np.subtract(li, Ti, out=hi)
            np.add(lr, Tr, out=lr)
            np.add(li, Ti, out=li)
        m *= 2
    while m < N:
        twr, twi = wr[:: N // (2 * m)][:m], wi[:: N // (2 * m)][:m]
        br, bi = ar.reshape(-1, 2 * m), ai.reshape(-1, 2 * m)
        Tr, Ti, X = tr.reshape(-1, m), ti.reshape(-1, m), tmp.reshape(-1, m)
        np.multiply(br[:, m:], twr, out=Tr)
        np.multiply(bi[:, m:], twi, out=X)
        np.subtract(Tr, X, out=Tr)
        np.multiply(br[:, m:], twi, out=Ti)
        np.multiply(bi[:, m:], twr, out=X)
        np.add(Ti, X, out=Ti)
        np.subtract(br[:, :m], Tr, out=br[:, m:])
        np.subtract(bi[:, :m], Ti, out=bi[:, m:])
        np.add(br[:, :m], Tr, out=br[:, :m])
        np.add(bi[:, :m], Ti, out=bi[:, :m])
        m *= 2
    return fft._join(ar, ai)


def _gauss_fft(z: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Stage by stage, but t = b w by Gauss's three multiplications (other roundings): must NOT match."""
    N = z.shape[0]
    ar, ai = fft._split(z[fft.bitrev(N)])
    m = 1
    while m < N:
        twr, twi = w.real[:: N // (2 * m)][:m], w.imag[:: N // (2 * m)][:m]
        br, bi = ar.reshape(-1, 2 * m), ai.reshape(-1, 2 * m)
        hr, hi = br[:, m:].copy(), bi[:, m:].copy()
        k1 = twr * (hr + hi)
        tr, ti = k1 - hi * (twr + twi), k1 + hr * (twi - twr)
        lr, li = br[:, :m].copy(), bi[:, :m].copy()
        br[:, :m], br[:, m:], bi[:, :m], bi[:, m:] = lr + tr, lr - tr, li + ti, li - ti
        m *= 2
    return fft._join(ar, ai)


def _bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.complex128).view(np.uint64)


def _same_bits(x: np.ndarray, y: np.ndarray) -> bool:
    return x.shape == y.shape and bool(np.array_equal(_bits(x), _bits(y)))


def _random(N: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(N) + 1j * rng.standard_normal(N)


def _special(N: int, seed: int, kind: str = "mixed") -> np.ndarray:
    """``mixed``: magnitudes 1e-320 .. 1e300 (subnormal products, no overflow) with zeros of both signs;
    ``tiny``: everything below 1e-311 (subnormal arithmetic throughout); ``zeros``: -0 and a few +0 (the signs of the
    zero results depend on every operation); ``huge``: a few +-1.7e308 (overflow to inf, inf - inf)."""
    rng = np.random.default_rng(seed)
    if kind == "zeros":
        parts = [np.where(rng.random(N) < 0.99, -0.0, 0.0) for _ in range(2)]
    else:
        lo, hi = {"mixed": (-320, 300), "tiny": (-323, -312), "huge": (-5, 5)}[kind]
        parts = [rng.standard_normal(N) * 10.0 ** rng.integers(lo, hi, N) for _ in range(2)]
        for p in parts:
            p[rng.random(N) < 0.1] = 0.0
            p[rng.random(N) < 0.1] = -0.0
            if kind == "huge":
                p[rng.integers(0, N, 2)] = (1.7e308, -1.7e308)
    out = np.empty(N, dtype=np.complex128)
    out.real, out.imag = parts
    return out


@pytest.mark.parametrize("t", range(1, 17))
def test_bitwise_random(t):
    N = 1 << t
    w, _ = fft.twiddles(N)
    for seed in (t, 100 + t):
        z = _random(N, seed)
        assert _same_bits(fft.fft(z, w), _reference_fft(z, w)), (N, seed)


@pytest.mark.parametrize("kind", ["mixed", "tiny", "zeros", "huge"])
@pytest.mark.parametrize("t", [1, 2, 3, 5, 7, 8, 10, 12, 15, 16])
def test_bitwise_special_values(t, kind):
    N = 1 << t
    w, _ = fft.twiddles(N)
    z = _special(N, t, kind)
    with np.errstate(all="ignore"):
        ref, y = _reference_fft(z, w), fft.fft(z, w)
    if t >= 7:  # the cases are exercised
        bits = _bits(ref)
        if kind == "mixed":
            assert np.isfinite(ref).all()
        if kind == "tiny":
            assert np.isfinite(ref).all() and ((ref.view(np.float64) != 0) & (np.abs(ref.view(np.float64)) < 2.2e-308)).any()
        if kind == "zeros":
            assert (bits == 0).any() and (bits == 1 << 63).any()  # +0 and -0 among the results
        if kind == "huge":
            assert not np.isfinite(ref).all()
    assert _same_bits(y, ref)


def test_bitwise_subnormal_inputs():
    N = 1 << 12
    z = _random(N, 7) * 1e-310  # every product underflows (gradual): subnormal arithmetic throughout
    w, _ = fft.twiddles(N)
    assert _same_bits(fft.fft(z, w), _reference_fft(z, w))


@pytest.mark.parametrize("t", [1, 4, 9, 13])
def test_bitwise_any_twiddle_table(t):
    """A caller's own table (writable: not the cached one) with arbitrary and special entries: the same bits."""
    N = 1 << t
    w = _special(N // 2, 50 + t)
    w[: N // 4] = _random(N // 4, t)
    z = _random(N, 60 + t)
    with np.errstate(all="ignore"):  # huge twiddles overflow
        assert _same_bits(fft.fft(z, w), _reference_fft(z, w))
    w2 = fft.twiddles(N)[0].copy()  # writable copy of the cached table: the uncached stage table, same bits
    assert _same_bits(fft.fft(z, w2), fft.fft(z, fft.twiddles(N)[0]))


def test_stage_table_follows_the_twiddle_cache():
    N = 1 << 9
    z = _random(N, 11)
    y = fft.fft(z, fft.twiddles(N)[0])
    fft.twiddles.cache_clear()  # as after an eviction: a new table object for the same N
    w = fft.twiddles(N)[0]
    assert fft._stage_twiddles(N)[0] is not w
    assert _same_bits(fft.fft(z, w), y) and _same_bits(y, _reference_fft(z, w))
    assert fft._stage_twiddles(N)[0] is w  # rebuilt for the new table


@pytest.mark.parametrize("rows,chunk,passes", [(2, 4, 2), (4, 16, 2), (4, 16, 3), (8, 32, 3), (2, 8, 4), (16, 64, 2), (8, 8, 5)])
def test_bitwise_every_pass_shape(monkeypatch, rows, chunk, passes):
    """Tiny blocking parameters: the transposed stages, the chunk transposition, the natural stages and later
    passes of 2..FFT_PASS stages (the split that never leaves one stage) all run at N <= 2^11."""
    monkeypatch.setattr(fft, "FFT_ROWS", rows)
    monkeypatch.setattr(fft, "FFT_CHUNK", chunk)
    monkeypatch.setattr(fft, "FFT_PASS", passes)
    for t in range(1, 12):
        N = 1 << t
        w, _ = fft.twiddles(N)
        z = _random(N, 1000 * rows + t) if t % 3 else _special(N, t)
        assert _same_bits(fft.fft(z, w), _reference_fft(z, w)), (rows, chunk, passes, N)


def test_other_roundings_differ():
    """The comparison can fail: another (also accurate) complex product gives other bits."""
    N = 1 << 10
    w, _ = fft.twiddles(N)
    z = _random(N, 3)
    g, y = _gauss_fft(z, w), fft.fft(z, w)
    assert np.max(np.abs(g - y)) < 1e-12 * np.max(np.abs(y))  # the same transform ...
    assert not _same_bits(g, y)  # ... with other bits
    z2 = z.copy()
    z2[5] = np.nextafter(z2[5].real, np.inf) + 1j * z2[5].imag  # one ulp in one input
    assert not _same_bits(fft.fft(z2, w), y)


def test_inputs_and_state():
    w, _ = fft.twiddles(1 << 8)
    z = _random(1 << 8, 9)
    before = np.getbufsize()
    zc = z.copy()
    y = fft.fft(z, w)
    assert np.getbufsize() == before and _same_bits(z, zc)  # numpy state restored, input untouched
    assert _same_bits(fft.fft(z.real.copy(), w), _reference_fft(z.real + 0j, w))  # real input: imaginary parts +0
    zs = np.zeros(2 << 8, dtype=np.complex128)
    zs[::2] = z
    assert _same_bits(fft.fft(zs[::2], w), y)  # a strided view
    assert _same_bits(fft.fft(np.array([2.5 - 1j]), w), np.array([2.5 - 1j]))  # N = 1: a copy
    for bad in (0, 3, 12):
        with pytest.raises(InputError):
            fft.fft(np.ones(bad, dtype=np.complex128), w)


def test_bitwise_two_to_the_20():  # about 0.7 s
    N = 1 << 20
    w, _ = fft.twiddles(N)
    z = _random(N, 20)
    z[::97] = _special(len(z[::97]), 20)  # wide magnitudes, subnormal products, signed zeros
    assert _same_bits(fft.fft(z, w), _reference_fft(z, w))


def _best(f, repeat: int = 5) -> float:
    b = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        b = min(b, time.perf_counter() - t0)
    return b


if __name__ == "__main__":  # timings: the reference (unblocked) transform, the blocked one, numpy's (best of 5)
    print("N       reference s  blocked s  np.fft.fft s  ref/blocked  same bits")
    for t in (16, 18, 20, 22):
        N = 1 << t
        w, _ = fft.twiddles(N)
        z = _random(N, t)
        same = _same_bits(fft.fft(z, w), _reference_fft(z, w))
        r, b, n = _best(lambda: _reference_fft(z, w)), _best(lambda: fft.fft(z, w)), _best(lambda: np.fft.fft(z))
        print(f"2^{t}    {r:10.4f}  {b:9.4f}  {n:12.4f}  {r / b:10.2f}x  {same}", flush=True)
