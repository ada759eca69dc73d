"""The early "too fine for this many steps" refusal of the PLD composition (certify.pld.compose.check_width).

* It must come at once (seconds, not the ~15-50 s a doomed composition used to run before multiply's exact
  MAX_ATOMS test refused it), through the CLI: exit 2, one line, nothing written.
* It must not refuse what completes: the prediction of the largest product a.atoms + b.atoms - 1 errs LOW
  (measured against the actual products of compositions that complete, both sides, both contracts), and
  the refusal needs it above MAX_ATOMS x WIDTH_MARGIN.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from certify.balls import InputError, exact
from certify.contract import FIXED_SIZE_REPLACE_ONE, POISSON_ADD_REMOVE
from certify.pld import compose
from certify.pld.accountant import _one_steps, plan
from certify.pld.pairs import profiles, shift

ROOT = Path(__file__).resolve().parents[1]


def _one_step_plds(contract, q, sigma, steps, delta, grid):
    q, sigma, delta, h = exact(q), exact(sigma), exact(delta), exact(grid)
    pl = plan(contract, q, sigma, steps, delta, h)
    d = shift(contract, sigma)
    for prof in profiles(contract):
        if prof.name not in pl.layouts:  # Poisson: the add direction is derived from the remove chains
            continue
        for s in _one_steps(prof.members, prof.name, q, d, h, pl.layouts[prof.name], pl.K):
            yield compose.from_one_step(s), pl.tau


@pytest.mark.parametrize(
    "contract,q,sigma,steps,delta,grid",
    [
        (POISSON_ADD_REMOVE, "0.01", "2", 3000, "1e-6", "1e-3"),
        pytest.param(POISSON_ADD_REMOVE, "0.5", "4", 1000, "1e-12", "1e-3", marks=pytest.mark.slow),  # about 1.5 s
        pytest.param(POISSON_ADD_REMOVE, "0.001", "1000000", 10**10, "1e-6", "1e-4", marks=pytest.mark.slow),
        pytest.param(POISSON_ADD_REMOVE, "0.001", "1000000", 10**8, "1e-100", "1e-4", marks=pytest.mark.slow),
        (FIXED_SIZE_REPLACE_ONE, "0.01", "2", 777, "1e-6", "1e-3"),
        pytest.param(FIXED_SIZE_REPLACE_ONE, "0.2", "1", 100, "1e-9", "1e-3", marks=pytest.mark.slow),
    ],
)
def test_prediction_errs_low(monkeypatch, contract, q, sigma, steps, delta, grid):
    sizes = []
    real = compose.multiply

    def spy(a, b, tau):
        sizes.append(a.atoms + b.atoms - 1)
        return real(a, b, tau)

    monkeypatch.setattr(compose, "multiply", spy)
    for one, tau in _one_step_plds(contract, q, sigma, steps, delta, grid):
        sizes.clear()
        pred = compose.predicted_product_size(one, steps, tau)
        got = compose.power(one, steps, tau)
        assert pred <= max(sizes), (pred, max(sizes))
        assert compose.predicted_width(one, steps, tau) <= got.atoms
        assert pred > 0.7 * max(sizes)  # and it is a usable prediction (measured 2-6% below)


def test_power_refuses_at_once():
    # the optimistic one-step measure at sigma = 1e6 is a two-point measure (1/4 at -h): 2.9e8 atoms at T = 1e15
    for one, tau in _one_step_plds(POISSON_ADD_REMOVE, "0.001", "1000000", 10**15, "1e-6", "1e-4"):
        t = time.perf_counter()
        if one.pessimistic:
            continue
        with pytest.raises(InputError, match="fewer steps"):
            compose.power(one, 10**15, tau)
        assert time.perf_counter() - t < 2


@pytest.mark.parametrize(
    "q,sigma,delta",
    [("0.5", "1e6", "1e-6"), ("0.001", "1e6", "1e-100"), ("0.01", "1e7", "1e-100")],
)
def test_cli_refuses_in_seconds(tmp_path, q, sigma, delta):
    out = tmp_path / "c.json"
    args = ["dpsgd", "--accountant", "pld", "--sampling", "poisson", "--adjacency", "add-remove", "--sampling-rate", q]
    args += ["--noise-multiplier", sigma, "--steps", "1000000000000000", "--delta", delta, "--out", str(out)]
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "certify", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
    sec = time.perf_counter() - t
    assert r.returncode == 2, r.stderr
    assert "fewer steps" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not out.exists()
    assert sec < 10, sec  # about 0.5 s (was 15-50 s for the cases the float estimate missed)
