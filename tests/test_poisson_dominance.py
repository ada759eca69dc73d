"""The remove direction dominates the add direction for the Poisson-subsampled Gaussian (obligation
``P-remove-dominates-add`` of ``certify proofs --paper mtz-poisson``), on which every ``dpsgd/renyi-poisson``
certificate rests.

Checked three ways: the obligation is proved and a perturbed step is rejected; the pointwise lemma S(y) >= 0
of its proof at random points; and the statement itself, B_alpha = E_P[(Q/P)^alpha] <= A_alpha =
E_Q[(P/Q)^alpha], by an independent 50-digit mpmath quadrature (written here, not shared with certify) at
random (q, sigma, alpha) including q near 1, sigma = 0.3, fractional and integer alpha up to 256.
"""

from __future__ import annotations

import random

import mpmath as mp
import pytest

from certify.proofs import FALSE, PROVED, obligations


def _ob():
    return next(ob for ob in obligations("mtz-poisson") if ob.id == "P-remove-dominates-add")


def test_obligation_proved():
    out = _ob().run()
    assert out.verdict == PROVED, out


def test_perturbed_step_rejected():
    # a wrong slope at the q = 1 boundary (the key step (4)): the factor w^(1-alpha) dropped / doubled
    assert _ob().run(claimed_slope=lambda w, al: 2 * w ** (1 - al) * (al * (1 - w) * (1 + w ** (2 * al - 1)) - (1 - w ** (2 * al)))).verdict == FALSE
    assert _ob().run(claimed_slope=lambda w, al: al * (1 - w) * (1 + w ** (2 * al - 1)) - (1 - w ** (2 * al))).verdict == FALSE


def _S(q, al, y):
    """S(y) = f(M(y)) + y f(M(1/y)), f(t) = t^al - t^(1-al), M(t) = 1 - q + q t (the proof's pointwise lemma)."""

    def f(t):
        return t**al - t ** (1 - al)

    return f(1 - q + q * y) + y * f(1 - q + q / y)


def test_pointwise_lemma_random_points():
    mp.mp.dps = 50
    rng = random.Random(20261201)
    for _ in range(2000):
        q = mp.mpf(rng.random()) or mp.mpf("0.5")
        al = 1 + mp.mpf(rng.random()) * rng.choice([1, 10, 300])
        y = mp.e ** mp.mpf(rng.uniform(-40, 40))
        val = _S(q, al, y)
        scale = (1 - q + q * y) ** al + y * (1 - q + q / y) ** al
        assert val >= -scale * mp.mpf(10) ** -45, (q, al, y, val)


def _moments(q, sigma, al):
    """(A, B) = (E_Q[(P/Q)^al], E_P[(Q/P)^al]) = (E[L^al], E[L^(1-al)]), L = 1 - q + q exp(mu x - mu^2/2), x ~ N(0,1),
    by 50-digit quadrature split where the integrands peak."""
    mu = 1 / sigma

    def L(x):
        return 1 - q + q * mp.e ** (mu * x - mu**2 / 2)

    def phi(x):
        return mp.e ** (-(x**2) / 2) / mp.sqrt(2 * mp.pi)

    pts = sorted({mp.mpf(-60), mp.mpf(0), mu, al * mu, al * mu + 60, mp.mpf(60)})
    pts = [-mp.inf] + pts + [mp.inf]
    A = mp.quad(lambda x: phi(x) * L(x) ** al, pts)
    B = mp.quad(lambda x: phi(x) * L(x) ** (1 - al), pts)
    return A, B


def _check(q, sigma, al):
    A, B = _moments(q, sigma, al)
    assert B <= A * (1 + mp.mpf(10) ** -40), (q, sigma, al, A, B)
    if al == int(al):  # the quadrature agrees with the binomial sum at integer orders
        n = int(al)
        s = mp.fsum(mp.binomial(n, k) * (1 - q) ** (n - k) * q**k * mp.e ** (k * (k - 1) / (2 * sigma**2)) for k in range(n + 1))
        assert abs(A / s - 1) < mp.mpf(10) ** -30, (q, sigma, al)


@pytest.mark.parametrize(
    "q, sigma, al", [pytest.param("0.999", "0.3", "20", marks=pytest.mark.slow), ("0.01", "0.3", "3.5"), ("0.5", "2", "256"), ("0.001", "5", "1.5")]
)
def test_add_never_exceeds_remove_by_quadrature(q, sigma, al):
    mp.mp.dps = 50
    _check(mp.mpf(q), mp.mpf(sigma), mp.mpf(al))  # (0.001, 5, 1.5): A/B - 1 = 1.26e-12, resolved at 50 digits


@pytest.mark.slow  # about 6 s of 50-digit quadrature
def test_add_never_exceeds_remove_by_quadrature_random():
    mp.mp.dps = 50
    rng = random.Random(7)
    for _ in range(12):
        q = mp.mpf(rng.choice(["0.001", "0.01", "0.1", "0.5", "0.9", "0.99"]))
        sigma = mp.mpf(rng.choice(["0.3", "0.8", "1.1", "2", "5"]))
        _check(q, sigma, 1 + mp.mpf(rng.random()) * rng.choice([1, 10, 40]))
