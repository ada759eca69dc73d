"""The checker's re-derivation of a PLD one-step layout (:func:`certify.pld.certificates.check_layouts`).

The layout rule (:func:`certify.pld.discretise.layout_of`) places indices with floats: floor(lo / h) - 1 and
ceil(hi / h) + 1 of libm-computed loss ranges. The checker demands equality with the producer's own layout, except
that an index whose quotient lies within LAYOUT_MARGIN = 1e-12 (relative) of its integer boundary may take either
neighbouring value (another platform's libm may land on the other side). These tests drive the real layout rule with
a curve whose loss range is chosen exactly (a stand-in member: ``loss_range`` is all the rule reads), so the quotient's
distance to its boundary is known, and check both sides of the margin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from certify.balls import InputError, fmpq
from certify.pld import discretise
from certify.pld.certificates import LAYOUT_MARGIN, check_layouts
from certify.pld.discretise import Layout, layout_of

H = fmpq(1, 100)


@dataclass(frozen=True)
class RangeOnly:
    """A member whose loss range at tail mass eta is (-a z, b z), z = sqrt(2 log(1/eta)) (a Gaussian-like tail)."""

    a: float
    b: float

    def loss_range(self, eta: float) -> tuple[float, float]:
        z = math.sqrt(2 * math.log(1 / eta))
        return -self.a * z, self.b * z


@dataclass(frozen=True)
class Fixed:
    """A member whose loss range is (lo, hi) whatever eta: the quotients lo / h, hi / h are set exactly."""

    lo: float
    hi: float

    def loss_range(self, eta: float) -> tuple[float, float]:
        return self.lo, self.hi


@dataclass(frozen=True)
class Prof:
    members: tuple


def derive_of(member, eta=1e-12, steps=None, target=None):
    """The producer's rule at the grid hh, for one layout named "x" (as check_layouts calls a plan function)."""
    calls = []

    def derive(hh):
        calls.append(hh)
        return {"x": layout_of(Prof((member,)), hh, eta, steps, target)}

    return derive, calls


def with_(lay: Layout, **kw) -> dict:
    return {"x": Layout(**{**lay.__dict__, **kw})}


def test_the_producers_layout_is_accepted_with_one_derivation():
    derive, calls = derive_of(RangeOnly(0.9, 1.1), steps=50, target=1e-6)
    want = derive(H)
    assert want["x"].bands, "the rule grades this layout"
    calls.clear()
    check_layouts(want, derive, H)
    assert calls == [H]  # equal: one call of the rule, no nudged runs


def test_a_quotient_within_the_margin_accepts_either_neighbour():
    # hi / h = 300 (1 + 1e-13): ceil gives 301 here, 300 on a platform whose float lands 1e-13 lower
    near = Fixed(-2.0, 3.0 * (1 + 1e-13))
    derive, _ = derive_of(near)
    lay = derive(H)["x"]
    assert lay.hi == 302
    check_layouts(with_(lay, hi=301), derive, H)  # the neighbour
    with pytest.raises(InputError, match="certify chooses"):
        check_layouts(with_(lay, hi=300), derive, H)  # two away
    with pytest.raises(InputError, match="certify chooses"):
        check_layouts(with_(lay, hi=303), derive, H)  # beyond both sides of the boundary (301, 302)


def test_an_exact_integer_quotient_accepts_either_neighbour():
    derive, _ = derive_of(Fixed(-2.0, 3.0))  # hi / h = 300 exactly (3.0 / (1/100) in exact arithmetic)
    lay = derive(H)["x"]
    assert (lay.lo, lay.hi) == (-201, 301)
    check_layouts(with_(lay, hi=302), derive, H)
    check_layouts(with_(lay, lo=-202), derive, H)
    check_layouts(with_(lay, lo=-202, hi=302), derive, H)  # each index independently


@pytest.mark.parametrize("rel", [1e-10, 1e-6])
def test_a_quotient_outside_the_margin_demands_equality(rel):
    derive, _ = derive_of(Fixed(-2.0 * (1 + rel), 3.0 * (1 + rel)))
    lay = derive(H)["x"]
    for bad in (with_(lay, hi=lay.hi - 1), with_(lay, hi=lay.hi + 1), with_(lay, lo=lay.lo - 1), with_(lay, lo=lay.lo + 1)):
        with pytest.raises(InputError, match="certify chooses"):
            check_layouts(bad, derive, H)


def test_the_margin_is_relative_1e_12_on_the_quotient():
    """Just inside and just outside 1e-12: 300 (1 + 0.9e-12) takes either neighbour, 300 (1 + 1.1e-12) does not."""
    assert LAYOUT_MARGIN == fmpq(1, 10**12)
    inside, _ = derive_of(Fixed(-2.0, 3.0 * (1 + 0.9e-12)))
    lay = inside(H)["x"]
    check_layouts(with_(lay, hi=lay.hi - 1), inside, H)
    outside, _ = derive_of(Fixed(-2.0, 3.0 * (1 + 1.1e-12)))
    lay = outside(H)["x"]
    with pytest.raises(InputError, match="certify chooses"):
        check_layouts(with_(lay, hi=lay.hi - 1), outside, H)


def test_the_band_shape_must_be_equal():
    derive, _ = derive_of(RangeOnly(0.9, 1.1), steps=50, target=1e-6)
    lay = derive(H)["x"]
    n = len(lay.bands)
    assert n >= 2
    for bands in (lay.bands[:-1], (), tuple((a, b, 2 * s) for a, b, s in lay.bands), lay.bands + ((lay.lo, lay.hi, 32),)):
        with pytest.raises(InputError, match="certify chooses"):
            check_layouts(with_(lay, bands=bands), derive, H)


def test_a_missing_or_extra_layout_is_refused():
    derive, _ = derive_of(RangeOnly(1.0, 1.0))
    lay = derive(H)["x"]
    with pytest.raises(InputError, match="must hold the layouts"):
        check_layouts({"x": lay, "y": lay}, derive, H)
    with pytest.raises(InputError, match="must hold the layouts"):
        check_layouts({"y": lay}, derive, H)


def test_the_rule_followed_is_the_producers():
    """check_layouts holds no copy of the rule: a different rule (here the ungraded one) gives a different answer."""
    graded, _ = derive_of(RangeOnly(0.9, 1.1), steps=50, target=1e-6)
    ungraded, _ = derive_of(RangeOnly(0.9, 1.1))
    lay = graded(H)
    check_layouts(lay, graded, H)
    with pytest.raises(InputError, match="certify chooses"):
        check_layouts(lay, ungraded, H)
    assert discretise.layout_of is layout_of
