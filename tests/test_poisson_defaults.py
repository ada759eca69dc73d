"""The default Rényi accountant of Poisson-sampled DP-SGD is as tight as the float libraries.

`certify dpsgd --sampling poisson` (and `certify.api`) choose by default the Rényi order and the way a fractional order
is bounded (:func:`certify.poisson.accountant.default_fractional`: the defining integral in balls). The certified
epsilon must never be more than 0.1% above the float RDP values of Opacus and dp_accounting on a grid of q, sigma, T
and delta. References, computed apart from certify:

* dp_accounting's ``RdpAccountant`` (its own RDP values, at its default orders);
* Opacus's RDP accountant: the same RDP formulas (both descend from TF Privacy's) at Opacus's default orders
  1.1, 1.2, ..., 10.9, 12, ..., 63, converted by the same Balle et al. (2020) Thm 21 formula; Opacus itself is not
  installed here, so its value is dp_accounting's RDP evaluated at Opacus's orders (where dp_accounting's fractional
  series does not converge it drops the order, which Opacus does not: the issue's reported Opacus value is used for the
  known case);
* an mpmath evaluation of the defining integral at 60 digits (tests/reference_poisson.py) at the chosen order.

Both float values are taken with the Balle conversion only: dp_accounting additionally returns epsilon = 0 when
delta >= sqrt(1 - exp(-D_alpha)) (a total-variation bound), which certify does not use; those cases (T = 1, tiny
epsilon) are compared with the conversion both libraries share and reported in the note below the grid.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath as mp
import pytest

from certify.balls import ball_endpoints, exact
from certify.contract import POISSON_ADD_REMOVE
from certify.poisson.accountant import certify_poisson, epsilon_upper
from certify.poisson.schedule import single
from fast_subset import fast_subset
from reference_poisson import log_A_quad, log_A_sum

rdp = pytest.importorskip("dp_accounting.rdp")
dp_accounting = pytest.importorskip("dp_accounting")

OPACUS_ORDERS = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
TOLERANCE = 1e-3  # the brief: never more than 0.1% above the float libraries


def _balle_min(orders, rdps, delta: float) -> float:
    """min over orders of rdp + log((a-1)/a) - (log delta + log a)/(a-1) (Balle et al. 2020 Thm 21), a > 1.01 as
    dp_accounting (the formula is unstable at a -> 1)."""
    best = math.inf
    for a, r in zip(orders, rdps):
        if a > 1.01 and math.isfinite(r):
            best = min(best, r + math.log1p(-1 / a) - (math.log(delta) + math.log(a)) / (a - 1))
    return best


def float_epsilons(q: str, sigma: str, steps: int, delta: str) -> dict[str, float]:
    out = {}
    for name, orders in (("dp_accounting", None), ("opacus", OPACUS_ORDERS)):
        acc = rdp.RdpAccountant(orders=orders)
        acc.compose(dp_accounting.PoissonSampledDpEvent(float(q), dp_accounting.GaussianDpEvent(float(sigma))), steps)
        out[name] = _balle_min(acc._orders, acc._rdp, float(delta))  # the library's own RDP values at its orders
    return out


GRID = list(itertools.product(["0.001", "0.02", "0.1", "0.5"], ["0.5", "1", "2", "5"], [1, 100, 10_000, 100_000], ["1e-8", "1e-5", "1e-3"]))
KEEP = [
    ("0.001", "0.5", 100, "1e-5"),  # the closest case of the grid (0.06% above: order 15/4 vs 3.7 and 3.8)
    ("0.02", "0.5", 100_000, "1e-5"),  # best order below 2
    ("0.5", "5", 1, "1e-8"),
    ("0.1", "2", 10_000, "1e-3"),
]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("q,sigma,steps,delta", fast_subset(GRID, keep=KEEP))
def test_default_is_within_a_tenth_of_a_percent_of_the_float_libraries(q, sigma, steps, delta):
    cert = certify_poisson(single(q, sigma, steps, POISSON_ADD_REMOVE), exact(delta))  # the defaults
    eps = float(epsilon_upper(cert))
    for name, ref in float_epsilons(q, sigma, steps, delta).items():
        assert eps <= ref + TOLERANCE * abs(ref), f"{name}: certified {eps} vs float {ref} (alpha {cert.witnesses['alpha']})"


def test_the_known_case_of_the_issue():
    """q = 0.02, sigma = 0.6, T = 50,000, delta = 1e-5: the chord certified 310.9, Opacus reports 179.9; the default
    now certifies 179.35 at alpha = 101/80 (the defining integral; 179.57 at the sixteenth 5/4), and the mpmath integral
    lies in the ball."""
    sch = single("0.02", "0.6", 50_000, POISSON_ADD_REMOVE)
    cert = certify_poisson(sch, exact("1e-5"))
    assert cert.witnesses == {"alpha": "101/80", "epsilon_bound": cert.witnesses["epsilon_bound"], "fractional": "integral"}
    lo, hi = (float(x) for x in ball_endpoints(cert.quantities["epsilon"].value))
    with mp.workdps(60):
        a = mp.mpf(101) / 80
        ref = 50_000 * log_A_quad(Fraction(101, 80), "0.02", "0.6") / (a - 1) + mp.log((a - 1) / a) - (mp.log(mp.mpf("1e-5")) + mp.log(a)) / (a - 1)
    assert lo <= float(ref) <= hi and hi - lo < 1e-7 * hi  # sound and tight
    assert 179.34 < hi < 179.36
    assert hi < 179.9  # Opacus's own report (the issue); dp_accounting 0.6 drops orders 1.1-1.3 here (its series does not converge)
    floats = float_epsilons("0.02", "0.6", 50_000, "1e-5")
    assert hi < floats["dp_accounting"] and hi < floats["opacus"]
    chord = float(epsilon_upper(certify_poisson(sch, exact("1e-5"), fractional="chord")))
    assert 310.8 < chord < 310.9  # what the default was


def test_an_integer_order_records_no_mode_and_matches_the_sum():
    """Where the best order is an integer the default writes the certificate it always wrote (no mode recorded)."""
    cert = certify_poisson(single("0.01", "1.1", 1000, POISSON_ADD_REMOVE), exact("1e-5"), alpha=8)
    assert "fractional" not in cert.witnesses
    lo, hi = ball_endpoints(cert.quantities["rdp[0]"].value)
    ref = log_A_sum(8, "0.01", "1.1") / 7
    assert float(lo) <= float(ref) <= float(hi)


def test_many_distinct_phases_fall_back_to_the_chord():
    """The default keeps checking cheap: a run of more distinct (q, sigma) pairs than 2 s of integrals takes the chord."""
    from certify.poisson.accountant import default_fractional
    from certify.poisson.schedule import Phase, Schedule

    few = Schedule(POISSON_ADD_REMOVE, tuple(Phase(Fraction(1, 100), Fraction(11 + i, 10), 10) for i in range(3)))
    many = Schedule(POISSON_ADD_REMOVE, tuple(Phase(Fraction(1, 100), Fraction(1000 + i, 1000), 10) for i in range(1000)))
    assert default_fractional(few) == "integral" and default_fractional(many) == "chord"
