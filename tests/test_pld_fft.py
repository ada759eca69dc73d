"""certify.pld.fft: the tilted float-FFT composition with an a-priori error bound (issue 24, engine module).

Independent references only:
* the float cyclic T-fold convolution against EXACT integer arithmetic (FLINT fmpz_poly powers reduced mod
  x^N - 1): the claimed bound E holds coefficient by coefficient, with wrap-around, with and without the
  refinement (including refined frequencies far from 0, where a one-piece Horner over complex balls fails);
* the twiddles' error bound against arb's cos_pi / sin_pi of a ball (another route than sin_cos_pi_fmpq);
* at small T the read-off of each direction against the EXACT untruncated T-fold product of the same one-step
  measures (FLINT power, then certify.pld.readoff): the FFT's pessimistic upper endpoint is above it and the
  optimistic lower endpoint below it, at several eps, both contracts, q in {0.01, 0.3};
* the certified bracket against certify's exact composition (certify_pld): they overlap (both enclose the
  truth), and the FFT bracket is no wider than 1.1x;
* refusals: eps below the read-off range, bad plans, bad inputs.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from flint import arb, fmpq, fmpz_poly

from certify.balls import InputError, UndecidedError, exact, outward_rational, workprec
from certify.contract import FIXED_SIZE_REPLACE_ONE, POISSON_ADD_REMOVE
from certify.pld import fft, readoff
from certify.pld.accountant import plan, run
from certify.pld.compose import Pld, from_one_step

DELTA = exact("1e-6")


def _exact_cyclic(ints: list[int], T: int, N: int) -> list[int]:
    c = fmpz_poly(ints) ** T
    out = [0] * N
    for k, v in enumerate(c.coeffs()):
        out[k % N] += int(v)
    return out


def _check_cyclic(kp: list[int], ko: list[int], e: int, T: int, N: int, thr: fmpq) -> tuple[float, dict]:
    xp = np.array([k * 2.0**-e for k in kp])
    xo = np.array([k * 2.0**-e for k in ko])
    Yp, Yo, E, parts = fft.cyclic_product_pair([(xp, xo, T)], N, thr)
    assert E.is_finite() and E < 1e-9, E  # a usable bound
    worst = 0.0
    with workprec(fft.PREC):
        for Y, ks in ((Yp, kp), (Yo, ko)):
            exact_c = _exact_cyclic(ks, T, N)
            for p in range(N):
                truth = arb(fmpq(exact_c[p], 2 ** (e * T)))
                err = abs(arb(float(Y[p])) / N - truth)
                assert err <= E, (p, err, E)  # decided in balls
                worst = max(worst, float(err.upper().mid()))
    return worst, parts


@pytest.mark.parametrize("thr", [fmpq(0), fft.REFINE_THRESHOLD])
@pytest.mark.parametrize(
    "seed,n,N,T,norm", [(1, 20, 64, 7, False), (2, 50, 64, 33, False), (3, 5, 256, 100, True), (4, 120, 128, 2, False), (5, 30, 1024, 64, True)]
)
def test_cyclic_bound_holds_coefficientwise(seed, n, N, T, norm, thr):
    rng = random.Random(seed)
    e = 20  # x_i = k_i 2^-e exactly (floats), so FLINT's integer power is the exact convolution
    kp = [rng.randrange(0, 2**e // n) if rng.random() > 0.3 else 0 for _ in range(n)]
    ko = [rng.randrange(0, 2**e // n) for _ in range(n)]
    kp[0] = kp[0] or 1
    if norm:  # total mass just below 1, as the pipeline's normalised tilted vectors: the low frequencies matter
        kp = [k * 2**e // sum(kp) for k in kp]
        ko = [k * 2**e // sum(ko) for k in ko]
    worst, parts = _check_cyclic(kp, ko, e, T, N, thr)
    assert not (thr and norm) or parts["refined"]["p"] > 0  # the refinement is exercised
    if not thr and T > 2:
        assert worst > 0  # the float result is not exact: E = 0 would fail this test
    # (T = 2, seed 4: with the two-table twiddles every coefficient of this short product happens to round to its
    # exact value; the bound is still checked above)


def test_refined_high_frequencies():
    """A concentrated vector (one atom of 0.9): |X_j| ~ 0.8 at EVERY frequency, so all of them are refined,
    up to j = N/2, over n = 300 terms (a one-piece Horner over complex balls lost ~n/2 bits there)."""
    e, n, N, T = 20, 300, 512, 20
    rng = random.Random(7)
    rest = [rng.randrange(0, 2**e // (10 * n)) for _ in range(n - 1)]
    kp = [2**e - 2**e // 10 - sum(rest) // 2] + [r // 2 for r in rest]
    ko = [2**e - 2**e // 10 - sum(rest)] + rest
    worst, parts = _check_cyclic(kp, ko, e, T, N, fft.REFINE_THRESHOLD)
    assert parts["refined"]["p"] == N // 2 + 1 and parts["refined"]["o"] == N // 2 + 1


@pytest.mark.parametrize("t", range(10, 17))
def test_twiddle_error_bound_every_entry(t):
    """The two-table twiddles (step 3') against Arb twiddles at N = 2^10..2^16, every entry: |w_j - exact| <= mu,
    decided in balls (an independent route: cos_pi / sin_pi of a ball, not sin_cos_pi_fmpq); mu is not vacuous."""
    N = 1 << t
    w, mu = fft.twiddles(N)
    assert w.shape == (N // 2,)
    assert mu < arb(4 * 2.0**-53)  # about 4 u (two roundings of the tables and one complex product)
    worst = arb(0)
    with workprec(fft.PREC):
        for j in range(N // 2):
            a = arb(fmpq(2 * j, N))
            c, s = a.cos_pi(), a.sin_pi()
            d = ((arb(float(w[j].real)) - c) ** 2 + (arb(float(w[j].imag)) + s) ** 2).sqrt()
            assert d <= mu, (N, j, d, mu)
            if d.upper() > worst.upper():
                worst = d.upper()
    assert worst > arb(2.0**-56)  # the products do round (the check sees real errors, not exact tables)


def test_twiddle_cache():
    N = 1024
    w, mu = fft.twiddles(N)
    assert fft.twiddles(N)[0] is w  # cached
    assert not w.flags.writeable
    assert fft.twiddles.cache_info().maxsize == fft.TWIDDLE_CACHE  # bounded
    with pytest.raises(InputError):
        fft.twiddles(1000)
    assert fft.twiddles(2)[0].tolist() == [1.0]


def test_fft_matches_numpy():
    rng = np.random.default_rng(0)
    z = rng.random(512) + 1j * rng.random(512)
    w, _ = fft.twiddles(512)
    assert np.max(np.abs(fft.fft(z, w) - np.fft.fft(z))) < 1e-11


# ------------------------------------------------------------------------------------------------
# The read-off against the exact untruncated T-fold products
# ------------------------------------------------------------------------------------------------
def _one_steps(contract, q: str, sigma: str, T: int, grid: str, K: int | None = None) -> dict:
    qq, ss, h = exact(q), exact(sigma), exact(grid)
    pl = plan(contract, qq, ss, T, DELTA, h, K=K, derive_add=False)
    r = run(contract, qq, ss, 1, pl)
    return {name: (from_one_step(r.one_step[(name, True)]), from_one_step(r.one_step[(name, False)])) for name in pl.layouts}


def _exact_power(p: Pld, T: int) -> Pld:
    """The EXACT T-fold product (no rounding, no truncation), units 2^-KT."""
    F = p.finite_mass()
    return Pld(p.poly**T, p.offset * T, (F + p.inf) ** T - F**T, p.K * T, p.pessimistic)


CASES = [
    (POISSON_ADD_REMOVE, "0.01", "2", 50, "1e-3"),
    (POISSON_ADD_REMOVE, "0.3", "5", 50, "1e-3"),
    (FIXED_SIZE_REPLACE_ONE, "0.01", "2", 50, "1e-2"),
    (FIXED_SIZE_REPLACE_ONE, "0.3", "5", 50, "1e-2"),
]
SLOW_CASES = [
    (POISSON_ADD_REMOVE, "0.01", "2", 200, "1e-3"),
    (POISSON_ADD_REMOVE, "0.3", "2", 100, "1e-3"),
    (FIXED_SIZE_REPLACE_ONE, "0.01", "2", 100, "1e-3"),
    (FIXED_SIZE_REPLACE_ONE, "0.3", "5", 100, "1e-3"),
]


def _check_against_exact(contract, q, sigma, T, grid, K=40, thr=None):
    h = exact(grid)
    for name, (pess, opt) in _one_steps(contract, q, sigma, T, grid, K).items():
        fp = fft.fft_plan([(pess, opt, T)], DELTA, h, thr)
        up, lo = fft.compose_pair([(pess, opt, T)], fp)
        ex_p, ex_o = _exact_power(pess, T), _exact_power(opt, T)
        # soundness everywhere in the range (far from the target the bound is loose: E is scaled by the tilt);
        # tightness near the direction's eps(delta)
        span = up.Ltop - up.La
        with workprec(fft.PREC):
            e_up = readoff.epsilon_pass([up], DELTA, h)
        assert e_up is not None and e_up >= up.La
        near = [e_up - fmpq(1, 20), e_up, e_up + fmpq(1, 20)]
        for eps in [up.La, up.La + span / 4, up.La + span / 2, up.Ltop, up.Ltop + 1] + near:
            ex_up = readoff.delta_at(ex_p, eps, h)
            ex_lo = readoff.delta_at(ex_o, eps, h)
            fu, fl = readoff.delta_at(up, eps, h), readoff.delta_at(lo, eps, h)
            assert fl.is_finite() and arb(fl.lower()) <= ex_lo, (name, eps, fl, ex_lo)  # decided in balls
            if eps < up.La:  # below the read-off range: undecided
                assert not fu.is_finite()
                continue
            assert fu.is_finite() and arb(fu.upper()) >= ex_up, (name, eps, fu, ex_up)
            if eps in near and eps >= up.La:  # tight: the error budget is far below delta there
                assert fu.upper() <= ex_up * (1 + arb(1e-6)) + arb(1e-15), (name, eps, fu, ex_up)
                assert fl.lower() >= ex_lo * (1 - arb(1e-6)) - arb(1e-15), (name, eps, fl, ex_lo)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0].sampling}-q{c[1]}-s{c[2]}-T{c[3]}-h{c[4]}")
def test_readoff_encloses_exact_product(case):
    _check_against_exact(*case)


@pytest.mark.parametrize("case", CASES[:3], ids=lambda c: f"{c[0].sampling}-q{c[1]}-s{c[2]}-T{c[3]}-h{c[4]}")
def test_readoff_encloses_exact_product_refined(case):
    """The same with the refinement (step 4') forced at small T (the plan refines from REFINE_MIN_STEPS on)."""
    _check_against_exact(*case, thr=fft.REFINE_THRESHOLD)


@pytest.mark.parametrize("contract,grid", [(POISSON_ADD_REMOVE, "1e-3")])
def test_tiny_tilted_masses_moved_and_still_sound(contract, grid):
    """T = 2: the tilt is so large that low-loss atoms fall below the float range (step 1'): the pessimistic
    measure moves them up, the optimistic one drops them; the read-off still encloses the exact product."""
    T, h = 2, exact(grid)
    moved = 0
    for pess, opt in _one_steps(contract, "0.01", "2", T, grid, 40).values():
        fp = fft.fft_plan([(pess, opt, T)], DELTA, h)
        o, mp, mo = fft._common(pess, opt)
        _, _, _, mp2, to_inf = fft.tilted(mp, o, pess.K, fp.lam, h, True)
        _, _, _, mo2, _ = fft.tilted(mo, o, pess.K, fp.lam, h, False)
        assert sum(mp2) + to_inf == sum(mp) and sum(mo2) <= sum(mo)
        moved += sum(a != b for a, b in zip(mp, mp2))
    assert moved > 0  # step 1' is exercised
    _check_against_exact(contract, "0.01", "2", T, grid)


@pytest.mark.slow
@pytest.mark.parametrize("case", SLOW_CASES, ids=lambda c: f"{c[0].sampling}-q{c[1]}-s{c[2]}-T{c[3]}-h{c[4]}")
def test_readoff_encloses_exact_product_slow(case):
    _check_against_exact(*case)


# ------------------------------------------------------------------------------------------------
# The plan, refusals
# ------------------------------------------------------------------------------------------------
def _pair(contract=POISSON_ADD_REMOVE, name="remove", T=50):
    pess, opt = _one_steps(contract, "0.01", "2", T, "1e-3")[name]
    return pess, opt, fft.fft_plan([(pess, opt, T)], DELTA, exact("1e-3"))


def test_plan_is_exact_and_pipeline_deterministic():
    pess, opt, fp = _pair()
    assert isinstance(fp.lam, fmpq) and fp.lam > 0
    assert fp.lam.q & (fp.lam.q - 1) == 0  # a dyadic rational (denominator a power of two)
    for s in (fp.s_alias_hi, fp.s_alias_lo, fp.s_top):
        assert isinstance(s, fmpq) and s >= 0 and s.q & (s.q - 1) == 0
    assert fp.N & (fp.N - 1) == 0 and 0 <= fp.j0 < fp.j1 <= fp.N
    assert fft.fft_plan([(pess, opt, 50)], DELTA, exact("1e-3")) == fp  # the choices are a function of the inputs
    assert set(fp.to_json()) >= {"lam", "N", "a", "j0", "j1", "threshold"}
    u1, l1 = fft.compose_pair([(pess, opt, fp.T)], fp)
    u0, l0, fp0 = fft.compose([(pess, opt, 50)], DELTA, exact("1e-3"))
    assert fp0 == fp and np.array_equal(u0.side.s1, u1.side.s1) and np.array_equal(l0.side.s1, l1.side.s1)
    u2, l2 = fft.compose_pair([(pess, opt, fp.T)], fp)
    assert np.array_equal(u1.side.s1, u2.side.s1) and np.array_equal(l1.side.s2, l2.side.s2)
    eps = fmpq(1, 4)
    h = exact("1e-3")
    assert u1.delta_at(eps, h).mid() == u2.delta_at(eps, h).mid() and l1.delta_at(eps, h).mid() == l2.delta_at(eps, h).mid()
    # any plan is sound: another tilt (a choice) gives other numbers, still above the exact product
    other = fft.FftPlan(**{**fp.__dict__, "lam": fp.lam * fmpq(3, 4)})
    u3, _ = fft.compose_pair([(pess, opt, fp.T)], other)
    e3 = max(eps, u3.La)
    assert arb(u3.delta_at(e3, h).upper()) >= readoff.delta_at(_exact_power(pess, 50), e3, h)


def test_refusal_below_the_read_off_range():
    pess, opt, fp = _pair()
    up, lo = fft.compose_pair([(pess, opt, fp.T)], fp)
    h = exact("1e-3")
    below = up.La - fmpq(1, 10**6)
    assert not readoff.delta_at(up, below, h).is_finite()  # undecided: contains every number, never passes
    with pytest.raises(UndecidedError):
        fft.delta_bound(up, below, h)
    assert fft.delta_bound(up, up.La, h).is_finite()
    assert readoff.delta_at(lo, below, h).is_finite()  # dropping mass: the optimistic bound holds at every eps
    with pytest.raises(UndecidedError):  # no rational bound can be taken from it
        outward_rational(readoff.delta_at(up, below, h), True, 256)
    e = readoff.epsilon_pass([up], DELTA, h)
    assert e is not None and e >= up.La  # the search never certifies below the range
    with pytest.raises(InputError):
        up.delta_at(fmpq(1), exact("1e-4"))  # another grid


def test_bad_inputs_are_refused():
    pess, opt, fp = _pair()
    h = exact("1e-3")
    with pytest.raises(InputError):
        fft.fft_plan([(opt, pess, 50)], DELTA, h)  # order: pessimistic first
    with pytest.raises(InputError):
        fft.fft_plan([(pess, opt, 1)], DELTA, h)
    with pytest.raises(InputError):
        fft.fft_plan([(pess, opt, 50)], fmpq(0), h)
    with pytest.raises(InputError):
        fft.compose_pair([(pess, opt, fp.T)], fft.FftPlan(**{**fp.__dict__, "base": fp.base + 1}))
    with pytest.raises(InputError):
        fft.compose_pair([(pess, opt, fp.T)], fft.FftPlan(**{**fp.__dict__, "j1": fp.N + 1}))
    with pytest.raises(InputError):
        fft.compose_pair([(pess, opt, fp.T)], fft.FftPlan(**{**fp.__dict__, "lam": fmpq(0)}))
    for args in (
        ("poisson", "0.01", "2", 50, "1e-6", "1e-3"),
        (POISSON_ADD_REMOVE, "0.01", "2", 1, "1e-6", "1e-3"),
        (POISSON_ADD_REMOVE, "0.01", "2", 50, "2", "1e-3"),
        (POISSON_ADD_REMOVE, "0.01", "2", 50, "1e-6", None),
    ):
        with pytest.raises(InputError):
            fft.bracket(*args)


# ------------------------------------------------------------------------------------------------
# The certified bracket against certify's exact composition
# ------------------------------------------------------------------------------------------------
def _check_bracket(contract, q, sigma, T, grid):
    from certify.pld import certify_pld

    lo, up = fft.bracket(contract, q, sigma, T, "1e-6", grid)
    cert = certify_pld(contract, q, sigma, T, "1e-6", grid)
    qs = cert.quantities
    clo, cup = qs["epsilon_lower"].value.lower().fmpq(), qs["epsilon_upper"].value.upper().fmpq()
    assert 0 < lo <= up
    assert up >= clo and lo <= cup, (lo, up, clo, cup)  # both enclose the truth: they must overlap
    assert up - lo <= fmpq(11, 10) * (cup - clo), (lo, up, clo, cup)  # and the FFT is as tight
    return lo, up, clo, cup


@pytest.mark.parametrize(
    "contract,q,sigma,T",
    [
        (POISSON_ADD_REMOVE, "0.01", "2", 50),
        (POISSON_ADD_REMOVE, "0.01", "2", 200),
        (POISSON_ADD_REMOVE, "0.3", "2", 200),
        (FIXED_SIZE_REPLACE_ONE, "0.3", "5", 50),
    ],
)
def test_bracket_against_certify(contract, q, sigma, T):
    _check_bracket(contract, q, sigma, T, "1e-3")


@pytest.mark.slow
@pytest.mark.parametrize("T", [100, 200])
def test_bracket_against_certify_slow(T):
    _check_bracket(FIXED_SIZE_REPLACE_ONE, "0.01", "2", T, "1e-3")
