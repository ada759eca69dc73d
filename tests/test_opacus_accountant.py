"""certify.opacus: the certified accountant inside real Opacus and torch (CPU).

References, each independent of the code under test: ``certify dpsgd --opacus-history`` run in-process on
the same history (the same certificate, reached through the command line), Opacus's own float
``RDPAccountant`` (within 1%; at Opacus's own order, ours lies above its float and within 1e-9 of it), the
mpmath binomial sum and quadrature of ``tests/reference_poisson.py`` (inside the ball, ball narrow), and
``certify verify`` on every certificate. Skipped, saying why, when Opacus is not installed; importing torch costs
about 5 CPU s, paid once by the first test that needs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction

import pytest

import reference_poisson as ref
from fast_subset import fast_subset
from certify.balls import InputError, ball_endpoints

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP_REASON = "the Opacus accountant tests need Opacus and torch: pip install 'certify[opacus]'"
DELTA = 1e-5
#: Opacus's own advice, not failures: its float RDP calibration at large sigma reaches its largest order, its
#: engine runs without a secure RNG, torch's hook fires with inputs that need no gradient
pytestmark = [
    pytest.mark.filterwarnings("ignore:Optimal order is the largest alpha"),
    pytest.mark.filterwarnings("ignore:Secure RNG turned off"),
    pytest.mark.filterwarnings("ignore:Full backward hook is firing"),
]


@pytest.fixture(scope="module")
def opacus():
    mod = pytest.importorskip("opacus", reason=SKIP_REASON)
    pytest.importorskip("torch", reason=SKIP_REASON)
    import certify.opacus

    certify.opacus.register()
    return mod


def _frac(q) -> Fraction:
    return Fraction(int(q.p), int(q.q))


def _cli_certificate(tmp_path, history) -> dict:
    """``certify dpsgd --opacus-history FILE --delta <exact binary value of 1e-5> --fractional-orders integral``
    run in-process (the accountant's settings)."""
    from certify import cli

    path, out = tmp_path / "history.json", tmp_path / "cli.json"
    path.write_text(json.dumps({"history": [list(e) for e in history], "mechanism": "certified"}))
    d = Fraction(DELTA)
    args = ["dpsgd", "--opacus-history", str(path), "--delta", f"{d.numerator}/{d.denominator}", "--fractional-orders", "integral"]
    assert cli.main([*args, "--out", str(out)]) == 0
    return json.loads(out.read_text())


def _opacus_rdp(history) -> tuple[float, float]:
    from opacus.accountants import RDPAccountant

    acc = RDPAccountant()
    acc.history = list(history)
    return acc.get_privacy_spent(delta=DELTA)


def test_importing_certify_loads_neither_torch_nor_opacus():
    code = "import sys, certify, certify.api, certify.cli, certify.opacus\nprint(sorted(m for m in ('torch', 'opacus') if m in sys.modules))\n"
    env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=os.path.dirname(HERE), env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.slow  # about 4 CPU s of torch on top of its import
def test_dpsgd_run_with_the_certified_accountant(opacus, tmp_path):
    """A few DP-SGD steps on a tiny model, Poisson batches as Opacus draws them; the engine's epsilon is the
    certified one, equal to the command line's on the same history, and its certificate verifies."""
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    from certify.opacus import CertifiedAccountant
    from certify.verify import verify_text

    torch.manual_seed(0)
    x, y = torch.randn(64, 4), torch.randn(64, 1)
    model = nn.Linear(4, 1)
    before = [p.detach().clone() for p in model.parameters()]
    engine = opacus.PrivacyEngine(accountant="certified")
    assert isinstance(engine.accountant, CertifiedAccountant)
    model, optimizer, loader = engine.make_private(
        module=model,
        optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        data_loader=DataLoader(TensorDataset(x, y), batch_size=16),
        noise_multiplier=1.1,
        max_grad_norm=1.0,
        poisson_sampling=True,
    )
    for _ in range(2):
        for xb, yb in loader:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(xb), yb).backward()
            optimizer.step()
    assert any(not torch.equal(a, b.detach()) for a, b in zip(before, model.parameters()))  # it trained
    acc = engine.accountant
    assert acc.history == [(1.1, 0.25, 8)] and len(acc) == 8

    eps = engine.get_epsilon(DELTA)
    cert = acc.certificate(DELTA)
    assert verify_text(cert.dumps()).exit_code == 0
    assert cert.inputs["phase[0].noise_multiplier.note"].startswith("binary float 1.1 from Opacus; exact binary value")
    assert cert.inputs["delta.note"].startswith("binary float 1e-05")
    bound = Fraction(cert.witnesses["epsilon_bound"])
    assert Fraction(eps) >= bound and float(bound) <= eps <= float(bound) * (1 + 2**-52)  # the double just above the decimal
    assert bound >= _frac(ball_endpoints(cert.quantities["epsilon"].value)[1])

    doc = _cli_certificate(tmp_path, acc.history)  # the command line on the same history
    mine = json.loads(cert.dumps())
    assert doc["witnesses"] == mine["witnesses"] and doc["quantities"] == mine["quantities"]

    theirs, _ = _opacus_rdp(acc.history)  # Opacus's own float RDP accountant
    assert abs(eps / theirs - 1) <= 0.01, (eps, theirs)

    # calibrate-then-train: make_private_with_epsilon calibrates through the certified accountant, and the run it
    # configures is certified to meet the target
    engine = opacus.PrivacyEngine(accountant="certified")
    model2 = nn.Linear(4, 1)
    model2, optimizer2, loader2 = engine.make_private_with_epsilon(
        module=model2,
        optimizer=torch.optim.SGD(model2.parameters(), lr=0.1),
        data_loader=DataLoader(TensorDataset(x, y), batch_size=16),
        target_epsilon=5.0,
        target_delta=DELTA,
        epochs=2,
        max_grad_norm=1.0,
    )
    for _ in range(2):
        for xb, yb in loader2:
            optimizer2.zero_grad()
            nn.functional.mse_loss(model2(xb), yb).backward()
            optimizer2.step()
    assert len(engine.accountant) == 8 and engine.accountant.history[0][0] == optimizer2.noise_multiplier
    assert Fraction(engine.accountant.certificate(DELTA).witnesses["epsilon_bound"]) <= 5

    path = tmp_path / "acc.pt"  # the state dict round-trips through torch's own checkpoint format
    torch.save(acc.state_dict(), path)
    again = CertifiedAccountant()
    again.load_state_dict(torch.load(path, weights_only=True))
    assert again.history == acc.history and again.get_epsilon(DELTA) == eps


HISTORIES = [
    [(1.1, 0.01, 1000)],
    [(0.8, 0.004, 5000)],
    [(2.0, 0.1, 100)],
    [(0.6, 0.02, 50000)],  # best order below 2: where the chord would be 73% looser
    [(1.1, 0.01, 500), (0.9, 0.02, 200), (2.5, 0.1, 50)],
]
#: Opacus sums its fractional-order series in float64: measured deviations from the 60-digit value up to 1.5e-11
OPACUS_ROUNDING = 1e-10


@pytest.mark.parametrize("history", fast_subset(HISTORIES, keep=[HISTORIES[3], HISTORIES[4]]))
def test_epsilon_against_opacus_rdp(opacus, history):
    from certify.opacus import CertifiedAccountant

    acc = CertifiedAccountant()
    acc.history = list(history)
    eps = acc.get_epsilon(DELTA)
    theirs, alpha_theirs = _opacus_rdp(history)
    assert abs(eps / theirs - 1) <= 0.01 and eps <= theirs * (1 + 1e-3), (eps, theirs)  # as tight as Opacus's float

    # at Opacus's own order (its float alpha taken exactly) ours encloses the same quantity: equal to Opacus's float
    # up to that float's rounding, and narrow
    r = acc.result(DELTA, alpha=Fraction(alpha_theirs))
    lo, hi = (float(_frac(v)) for v in ball_endpoints(r.ball))
    assert abs(hi - theirs) <= OPACUS_ROUNDING * theirs and hi - lo <= 1e-12 * hi, (lo, hi, theirs)

    # at an integer order, against the mpmath binomial sum at 60 digits (soundness and width)
    r = acc.result(DELTA, alpha=12)
    with ref.mp.workdps(ref.DPS):
        K = sum(t * ref.log_A_sum(12, Fraction(q), Fraction(s)) for s, q, t in history)
        reference = Fraction(ref.mp.nstr(ref.epsilon(K, 12, Fraction(DELTA)), 55))
    lo, hi = (_frac(v) for v in ball_endpoints(r.ball))
    assert lo <= reference <= hi and hi - lo <= Fraction(1, 10**20) * hi


@pytest.mark.parametrize("history", fast_subset(HISTORIES, keep=[HISTORIES[3]]))
def test_fractional_order_against_mpmath_quadrature(opacus, history):
    """At Opacus's fractional order, the certified ball contains the 60-digit quadrature of the defining integral."""
    from certify.opacus import CertifiedAccountant

    acc = CertifiedAccountant()
    acc.history = list(history)
    _, alpha = _opacus_rdp(history)
    a = Fraction(alpha)
    with ref.mp.workdps(ref.DPS):
        K = sum(t * ref.log_A_quad(a, Fraction(q), Fraction(s)) for s, q, t in history)
        reference = Fraction(ref.mp.nstr(ref.epsilon(K, a, Fraction(DELTA)), 55))
    lo, hi = (_frac(v) for v in ball_endpoints(acc.result(DELTA, alpha=a).ball))
    assert lo <= reference <= hi and hi - lo <= Fraction(1, 10**12) * hi


def test_get_noise_multiplier_calibrates_through_the_certified_accountant(opacus):
    """Opacus's own calibration, unchanged, returns a sigma whose certified epsilon meets the target."""
    from opacus.accountants.utils import get_noise_multiplier

    from certify.poisson.accountant import certify_poisson
    from certify.poisson.ecosystem import opacus_history
    from certify.verify import verify_text

    sigma = get_noise_multiplier(target_epsilon=3.0, target_delta=DELTA, sample_rate=0.01, epochs=5, accountant="certified")
    cert = certify_poisson(opacus_history([(sigma, 0.01, 500)]), Fraction(DELTA), epsilon_bound="3", fractional="integral")
    assert cert.claims[-1].holds is True  # certified: epsilon <= 3 at this sigma
    assert verify_text(cert.dumps()).exit_code == 0
    sigma_rdp = get_noise_multiplier(target_epsilon=3.0, target_delta=DELTA, sample_rate=0.01, epochs=5, accountant="rdp")
    assert abs(sigma / sigma_rdp - 1) < 0.02, (sigma, sigma_rdp)


def test_state_dict_and_refusals(opacus):
    from opacus.accountants import RDPAccountant, create_accountant, register_accountant

    import certify.opacus
    from certify.opacus import CertifiedAccountant

    acc = create_accountant(mechanism="certified")
    assert acc.get_epsilon(DELTA) == 0.0 and len(acc) == 0  # no step: the data was never touched
    with pytest.raises(InputError, match="history"):
        acc.certificate(DELTA)
    with pytest.raises(InputError, match="delta"):
        acc.get_epsilon(float("nan"))
    for _ in range(3):
        acc.step(noise_multiplier=1.0, sample_rate=0.02)
    acc.step(noise_multiplier=2.0, sample_rate=0.02)
    assert acc.history == [(1.0, 0.02, 3), (2.0, 0.02, 1)] and len(acc) == 4
    state = acc.state_dict()
    assert state["mechanism"] == "certified"
    other = CertifiedAccountant()
    other.load_state_dict(json.loads(json.dumps(state)))  # lists from JSON become Opacus's tuples
    assert other.history == acc.history and other.get_epsilon(DELTA) == acc.get_epsilon(DELTA)

    with pytest.raises(InputError, match="noise_multiplier"):
        acc.step(noise_multiplier=float("nan"), sample_rate=0.02)
    with pytest.raises(InputError, match="sample_rate"):
        acc.step(noise_multiplier=1.0, sample_rate=1.5)
    with pytest.raises(ValueError, match="entry 0"):
        other.load_state_dict({"history": [(float("inf"), 0.01, 10)], "mechanism": "certified"})
    with pytest.raises(ValueError, match="mechanism"):
        other.load_state_dict({"history": [(1.0, 0.01, 10)], "mechanism": "rdp"})
    assert other.history == acc.history  # a refused state leaves the accountant as it was

    assert certify.opacus.register() is CertifiedAccountant  # idempotent
    register_accountant("certified", RDPAccountant, force=True)
    try:
        with pytest.raises(ValueError, match="already registered"):
            certify.opacus.register()
    finally:
        register_accountant("certified", CertifiedAccountant, force=True)
