"""Core: exact parsing, Gaussian functions vs 50-digit mpmath, outward rounding, three-valued logic."""

from fractions import Fraction

import mpmath as mp
import pytest
from hypothesis import given, settings, strategies as st

from certify.balls import (
    InputError,
    Phi,
    Q,
    Q1,
    Tri,
    UndecidedError,
    arb,
    ball,
    ball_endpoints,
    certain_ceil,
    compare,
    escalate,
    exact,
    exact_int,
    exact_str,
    fmpq,
    lower_decimal,
    phi,
    upper_decimal,
    workprec,
)
from certify.published import classify, last_place

mp.mp.dps = MPMATH_DPS = 60  # this module's precision (tests/conftest.py sets it per test)


def to_mpf(x: arb, which: str) -> mp.mpf:
    """Exact mpf of a ball's mid or rad (via the dyadic mantissa/exponent pair)."""
    m, e = (x.mid() if which == "mid" else x.rad()).man_exp()
    return mp.mpf((int(m), int(e)))


def in_ball(x: arb, ref: mp.mpf, rel_tol="1e-45") -> bool:
    """ref lies in x, up to rel_tol of ref (the reference's own error, far below x's radius)."""
    with mp.workdps(mp.mp.dps + 20):
        mid, rad = to_mpf(x, "mid"), to_mpf(x, "rad")
        return abs(ref - mid) <= rad + abs(ref) * mp.mpf(rel_tol)


def rel_width(x: arb) -> float:
    return float(to_mpf(x, "rad") / abs(to_mpf(x, "mid")))


@pytest.mark.parametrize(
    "text,value",
    [
        ("1e-7", Fraction(1, 10**7)),
        ("0.01", Fraction(1, 100)),
        ("1/3", Fraction(1, 3)),
        ("5", Fraction(5)),
        ("-2.5E+3", Fraction(-2500)),
        (".5", Fraction(1, 2)),
        ("1e-3/7", Fraction(1, 7000)),
        (7, Fraction(7)),
        (Fraction(2, 9), Fraction(2, 9)),
        (" 3 ", Fraction(3)),
    ],
)
def test_exact_parses_exactly(text, value):
    q = exact(text, "x")
    assert (int(q.p), int(q.q)) == (value.numerator, value.denominator)


@pytest.mark.parametrize("bad", [0.1, 1.0, True, "0.1.2", "1e", "abc", "1/0", "", "1//2", None, [1]])
def test_exact_refuses_floats_and_garbage(bad):
    with pytest.raises(InputError) as err:
        exact(bad, "--mu")
    assert str(err.value).startswith("--mu:")


def test_float_message_says_why():
    with pytest.raises(InputError, match="not exact"):
        exact(0.01, "--mu")


def test_exact_int():
    assert exact_int("1e6", "n") == 1000000
    with pytest.raises(InputError, match="integer"):
        exact_int("2.5", "n")


def test_exact_str_roundtrip():
    for q in (fmpq(-1, 7), fmpq(3), fmpq(10**30 + 1, 3)):
        assert exact(exact_str(q)) == q


@settings(max_examples=60, deadline=None)
@given(st.fractions(min_value=-8, max_value=60, max_denominator=1000))
def test_Q_Q1_Phi_phi_contain_mpmath_and_are_tight(t):
    ref_t = mp.mpf(t.numerator) / t.denominator
    with workprec(128):
        tq = fmpq(t.numerator, t.denominator)
        vals = {"Q": Q(tq), "Q1": Q1(tq), "Phi": Phi(tq), "phi": phi(tq)}
    with mp.workdps(120):
        refs = {
            "Q": mp.erfc(ref_t / mp.sqrt(2)) / 2,
            "Phi": mp.ncdf(ref_t),
            "phi": mp.npdf(ref_t),
        }
        refs["Q1"] = mp.npdf(ref_t) - ref_t * refs["Q"]
    for name, v in vals.items():
        assert v.is_finite()
        assert in_ball(v, refs[name]), (name, t, v, refs[name])
        # 128 bits is ~1e-38; Arb's hypgeom_u returns radii up to ~2^-100 relative for z near 10
        assert rel_width(v) < 1e-25, (name, t, v)


def test_Q1_matches_quadrature_and_deep_tail():
    with workprec(128):
        for t in ("0", "1/2", "3", "7"):
            q = exact(t)
            ref = mp.quad(lambda s: mp.erfc(s / mp.sqrt(2)) / 2, [mp.mpf(int(q.p)) / int(q.q), mp.inf])
            assert in_ball(Q1(q), ref, "1e-40")
        # t = 1e4: phi - tQ cancels completely in doubles; the U form stays sharp.
        v = Q1(10**4)
        assert v.is_finite() and rel_width(v) < 1e-30
        with mp.workdps(200):
            ref = mp.npdf(10**4) - 10**4 * mp.erfc(10**4 / mp.sqrt(2)) / 2
        assert in_ball(v, ref, "1e-35")


@settings(max_examples=100, deadline=None)
@given(st.fractions(min_value=-(10**6), max_value=10**6, max_denominator=10**9), st.integers(1, 12))
def test_outward_rounding_is_outward_and_minimal(q, digits):
    with workprec(128):
        x = ball(fmpq(q.numerator, q.denominator))
    x_lo, x_hi = ball_endpoints(x)
    up, lo = exact(upper_decimal(x, digits)), exact(lower_decimal(x, digits))
    assert up >= x_hi and lo <= x_lo
    # minimal: one unit less in the last place would no longer bound
    if up != 0:
        assert up - last_place(upper_decimal(x, digits)) < x_hi
    if lo != 0:
        assert lo + last_place(lower_decimal(x, digits)) > x_lo


def test_rounding_carries_into_new_digit():
    with workprec(128):
        assert upper_decimal(ball(exact("9.9999")), 3) == "1.00e1"
        assert lower_decimal(ball(exact("-9.9999")), 3) == "-1.00e1"


def test_three_valued_comparisons():
    with workprec(64):
        a = arb(1) / 3
        wide = arb("0.33 +/- 0.1")
        assert compare(a, "<", fmpq(1, 2)) is Tri.TRUE
        assert compare(a, ">", fmpq(1, 2)) is Tri.FALSE
        assert compare(wide, "<", a) is Tri.UNDECIDED
        assert compare(arb("nan"), "<", 1) is Tri.UNDECIDED
        with pytest.raises(TypeError):
            bool(Tri.TRUE)


def test_certain_ceil():
    with workprec(128):
        assert certain_ceil(ball(exact("1318.9"))) == 1319
        assert certain_ceil(arb("5 +/- 1e-30")) is None
        assert certain_ceil(arb(7)) == 7


def test_escalate_raises_precision_then_fails_clearly():
    seen = []

    def compute(prec):
        seen.append(prec)
        if prec < 512:
            raise UndecidedError("too coarse")
        return prec

    assert escalate(compute) == 512 and seen[:3] == [128, 256, 512]
    with pytest.raises(UndecidedError, match="still undecided"):
        escalate(lambda prec: (_ for _ in ()).throw(UndecidedError("never")), ladder=(64, 128))


def test_classify_rounding_modes():
    with workprec(128):
        v = ball(exact("9.8950587223e-8"))
        assert classify(v, "9.89505873e-8", "upward")[0] == "confirmed"
        assert classify(v, "9.89505872e-8", "upward")[0] == "mismatch"
        assert classify(v, "9.89505872e-8", "nearest")[0] == "confirmed"
        assert classify(v, "9.9e-8", "nearest")[0] == "confirmed"
        assert classify(v, "9.8e-8", "nearest")[0] == "mismatch"
        assert classify(arb(519), "519", "exact")[0] == "confirmed"
        assert classify(arb(518), "519", "exact")[0] == "mismatch"
        assert classify(ball(exact("1.76501")), "1.77", "nearest")[0] == "confirmed"
        # 1.765 is not dyadic: its ball straddles the rounding boundary, so the verdict is undecided
        assert classify(ball(exact("1.765")), "1.77", "nearest")[0] == "undecided"
        assert classify(arb("1.765 +/- 1e-10"), "1.77", "nearest")[0] == "undecided"


def test_outward_rational_tiny_and_ordinary_endpoints():
    """Safe side always; no huge rational for a far Gaussian tail (it would hang or abort in FLINT)."""
    from certify.balls import arb, fmpq, outward_rational, workprec

    with workprec(128):
        tiny = arb("1e-21501706")
        assert outward_rational(tiny, True, 200) == fmpq(1, 2**200)
        assert outward_rational(tiny, False, 200) == 0
        assert outward_rational(-tiny, True, 200) == 0
        assert outward_rational(-tiny, False, 200) == -fmpq(1, 2**200)
        far = arb(10) ** -(10**12)  # exponent beyond what an exact rational could hold
        assert outward_rational(far, True, 64) == fmpq(1, 2**64) and outward_rational(far, False, 64) == 0
        x = arb(fmpq(1, 3))
        lo, hi = outward_rational(x, False, 64), outward_rational(x, True, 64)
        assert lo <= fmpq(1, 3) <= hi and hi - lo < fmpq(1, 2**120)
