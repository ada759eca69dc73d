"""The addition chain of the T-fold powers (certify.pld.compose): left to right since issue 24, right to left before.

Both chains form floor(log2 T) squarings and popcount(T) - 1 other products (the same rounding and truncation
budget); the left-to-right one multiplies by the one-step measure itself, so its products are smaller. Checked here:
the chains' shapes; the left-to-right composition against exact T-fold references (enumeration of a discrete
mechanism's outcomes, at T where the two chains differ); its bracket no wider than the right-to-left one's by more
than the issue's 10%; the cache of prefix powers (a later T reuses an earlier T's prefix, bit for bit); the witness
``chain`` (written by certify, re-run by the checker, anything else refused); certificates written before it (no
``chain``: the right-to-left chain) still verify with both checkers.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import mpmath as mp
import pytest

from certify.balls import InputError, ball_endpoints
from certify.contract import FIXED_SIZE_REPLACE_ONE, POISSON_ADD_REMOVE
from certify.events.ledger import ledger_of
from certify.events.pld_certificates import certify_events_pld
from certify.pld import certify_pld, compose
from certify.pld.accountant import Plan, plan, run
from certify.verify import verify_document, verify_text
from pld_event_helpers import mp_of, ref_discrete_delta, selfc
from test_forger import reseal

DATA = Path(__file__).parent / "data"


def _exponents(steps: int, chain) -> int:
    """Replays chain_products: every product's factors must be powers formed before; returns the last power."""
    have, last = {1}, 1
    for m, n in compose.chain_products(steps, chain):
        assert m in have and n in have, (steps, chain, m, n)
        last = m + n
        have.add(last)
    return last


@pytest.mark.parametrize("chain", compose.CHAINS)
def test_chain_shapes(chain):
    for T in range(1, 700):
        prods = compose.chain_products(T, chain)
        assert len(prods) == compose.products(T), (T, chain)
        assert sum(1 for m, n in prods if m == n) == T.bit_length() - 1  # the squarings
        if T > 1:
            assert _exponents(T, chain) == T
    assert all(n == 1 or n == m for m, n in compose.chain_products(10**6, compose.LEFT_TO_RIGHT))


def _digest(p: compose.Pld) -> tuple:
    return (tuple(int(c) for c in p.poly.coeffs()), p.offset, p.inf, p.K, p.pessimistic)


def _one_step(T: int = 40, grid: str = "1e-2"):
    from certify.balls import exact

    q, s, d, h = exact("1/50"), exact("1"), exact("1e-6"), exact(grid)
    pl = plan(POISSON_ADD_REMOVE, q, s, T, d, h)
    r = run(POISSON_ADD_REMOVE, q, s, 1, pl)
    return compose.from_one_step(r.one_step[("remove", True)]), pl.tau


def test_left_to_right_is_the_naive_product_sequence_and_its_prefixes_are_shared():
    """A^13 left to right is ((((A A) A) ^2) ^2) A, formed product by product here; a later query for A^26 (prefix 13)
    reuses the cached A^13 and equals a fresh computation bit for bit."""
    one, tau = _one_step()
    m = compose.multiply
    a2 = m(one, one, tau)
    a3 = m(a2, one, tau)
    a6 = m(a3, a3, tau)
    a12 = m(a6, a6, tau)
    a13 = m(a12, one, tau)
    assert _digest(compose.power(one, 13, tau, None, compose.LEFT_TO_RIGHT)) == _digest(a13)
    compose.clear_cache()
    key = ("test-chain", 1)
    compose.power(one, 13, tau, key, compose.LEFT_TO_RIGHT)
    cache = compose._POWERS[(key, tau, compose.LEFT_TO_RIGHT)]
    assert 13 in cache and 6 in cache
    calls = []
    real = compose.multiply

    def counted(a, b, t):
        calls.append((a.atoms, b.atoms))
        return real(a, b, t)

    compose.multiply = counted
    try:
        shared = compose.power(one, 26, tau, key, compose.LEFT_TO_RIGHT)
    finally:
        compose.multiply = real
    assert len(calls) == 1  # one squaring of the cached A^13
    compose.clear_cache()
    assert _digest(shared) == _digest(compose.power(one, 26, tau, None, compose.LEFT_TO_RIGHT))
    # the right-to-left chain forms other products (A^2 A^4 ... ): another measure, cached apart
    assert _digest(compose.power(one, 6, tau, None)) != _digest(compose.power(one, 6, tau, None, compose.LEFT_TO_RIGHT))


def test_unknown_chain_refused():
    one, tau = _one_step()
    with pytest.raises(InputError, match="witnesses.chain"):
        compose.power(one, 5, tau, None, "right-to-left")


# ------------------------------------------------------------------------------------------------
# Exact references: T-fold compositions of discrete mechanisms by enumeration (mpmath, written apart)
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("T", [6, 11])
def test_discrete_laplace_T_fold_left_to_right(T):
    """T = 6 and 11 are where the chains differ ((A^3)^2 vs A^2 A^4; ((A^2)^2 A)^2 A vs A A^2 A^8)."""
    t, D = mp.mpf(1) / 2, 2
    r = mp.e ** (-t)
    c = (1 - r) / (1 + r)
    atoms = [(t * D, 1 / (1 + r)), (-t * D, r**D / (1 + r))] + [(t * (D - 2 * x), c * r**x) for x in range(1, D)]
    ev = selfc({"class_name": "DiscreteLaplaceDpEvent", "noise_parameter": "1/2", "sensitivity": 2}, T)
    cert = certify_events_pld(ledger_of(ev, "add-remove"), epsilon="1", grid="1e-3")
    assert json.loads(cert.dumps())["witnesses"]["chain"] == "left-to-right"
    lo = mp_of(ball_endpoints(cert.quantities["delta_lower"].value)[0])
    hi = mp_of(ball_endpoints(cert.quantities["delta_upper"].value)[1])
    ref = ref_discrete_delta(atoms, T, 1)
    assert lo <= ref <= hi and hi - lo <= mp.mpf("0.01") * ref, (lo, ref, hi)


@pytest.mark.parametrize("T", [7, 12])
def test_randomized_response_T_fold_left_to_right(T):
    """Randomized response (2 outputs, noise 1/2: P-loss +log 3 w.p. 3/4, -log 3 w.p. 1/4), replace-one."""
    atoms = [(mp.log(3), mp.mpf(3) / 4), (-mp.log(3), mp.mpf(1) / 4)]
    ev = selfc({"class_name": "RandomizedResponseDpEvent", "noise_parameter": "1/2", "num_buckets": 2}, T)
    cert = certify_events_pld(ledger_of(ev, "replace-one"), epsilon="1", grid="1e-3")
    lo = mp_of(ball_endpoints(cert.quantities["delta_lower"].value)[0])
    hi = mp_of(ball_endpoints(cert.quantities["delta_upper"].value)[1])
    ref = ref_discrete_delta(atoms, T, 1)
    assert lo <= ref <= hi and hi - lo <= mp.mpf("0.01") * ref, (lo, ref, hi)


# ------------------------------------------------------------------------------------------------
# The bracket: no wider than the right-to-left chain's by more than 10% (issue 24)
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "contract,q,sigma,T,grid",
    [
        (POISSON_ADD_REMOVE, "1/100", "2", 1000, "1e-3"),
        (POISSON_ADD_REMOVE, "1/1000", "0.8", 3000, "1e-3"),
        (FIXED_SIZE_REPLACE_ONE, "1/100", "2", 300, "1e-3"),
    ],
)
def test_bracket_as_tight_as_the_right_to_left_chain(contract, q, sigma, T, grid):
    new = certify_pld(contract, q, sigma, T, "1e-6", grid, method="exact")  # the chain (from T = 1000 the default is the FFT)
    doc = json.loads(new.dumps())
    assert doc["witnesses"]["chain"] == "left-to-right"
    from certify.balls import exact

    pl = Plan.from_json(exact(grid), {k: v for k, v in doc["witnesses"].items() if k not in ("epsilon_upper", "epsilon_lower", "lower_profiles")})
    pl.chain = None
    compose.clear_cache()
    from certify.pld.readoff import epsilon_fail, epsilon_pass

    d, h = exact("1e-6"), exact(grid)
    old = run(contract, exact(q), exact(sigma), T, pl, lower=tuple(doc["witnesses"]["lower_profiles"]))
    old_up = epsilon_pass(old.side(True), d, h)
    old_low = epsilon_fail(old.side(False), d, h, old_up)
    up, low = (exact(doc["witnesses"][k]) for k in ("epsilon_upper", "epsilon_lower"))
    assert low > 0 and old_low > 0
    assert up - low <= (old_up - old_low) * exact("1.1"), (float(low), float(up), float(old_low), float(old_up))
    assert max(low, old_low) <= min(up, old_up)  # the two certified brackets of the same truth overlap


# ------------------------------------------------------------------------------------------------
# The witness: written, re-run, anything else refused; old certificates still verify
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def genuine():
    return json.loads(certify_pld(FIXED_SIZE_REPLACE_ONE, "1/100", "2", 20, "1e-5", "1e-2").dumps())


@pytest.mark.parametrize("value", ["right-to-left", "Left-to-right", "", 1, None, ["left-to-right"]])
def test_forged_chain_values_refused(genuine, value):
    doc = copy.deepcopy(genuine)
    doc["witnesses"]["chain"] = value
    rep = verify_document(reseal(doc))
    assert rep.exit_code == 4 and "witnesses.chain" in " ".join(rep.problems), (rep.exit_code, rep.problems)


def test_a_new_certificate_stripped_of_its_chain_is_refused(genuine):
    """Without the witness the checker re-runs the right-to-left chain (T = 20: A^4 A^16 instead of ((A^2)^2 A)^2)^2):
    other composed measures, so the recorded numbers are not the ones it re-derives."""
    assert verify_document(copy.deepcopy(genuine)).exit_code == 0
    doc = copy.deepcopy(genuine)
    del doc["witnesses"]["chain"]
    rep = verify_document(reseal(doc))
    assert rep.exit_code == 4, (rep.exit_code, rep.problems)


@pytest.mark.parametrize("name", ["pld_cert_rtl_100.json", "events_pld_rtl_delta.json", "events_pld_rtl_eps.json"])
def test_certificates_written_before_the_chain_verify_with_both_checkers(name):
    """Written by certify at 0a17c2f (the right-to-left chain, no ``chain`` witness): T = 100 Poisson, and events/pld
    ledgers of count 100 and 6."""
    text = (DATA / name).read_text()
    assert "chain" not in json.loads(text)["witnesses"]
    assert verify_text(text).ok
    import certify_kernel

    if json.loads(text)["kind"] == "pld/dpsgd":
        assert certify_kernel.check_text(text).status == 0
