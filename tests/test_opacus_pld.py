"""certify.opacus's PLD variant: ``PrivacyEngine(accountant="certified-pld")``, registered by the same
``certify.opacus.register()`` call as ``"certified"``.

References apart from the code under test: ``certify dpsgd --accountant pld`` run in-process on the exact values of
the same floats (the same certificate), Opacus's own float PRV accountant (a PLD-type estimate: ours within 1% and
not below its lower estimate by more than its own error), certify's Rényi accountant (the PLD bound is lower), and
``certify verify`` on every certificate. Skipped, saying why, when Opacus is not installed.
"""

from __future__ import annotations

import json
import warnings
from fractions import Fraction

import pytest

from certify import cli
from certify.balls import InputError, ball_endpoints
from certify.verify import verify_text

SKIP_REASON = "the Opacus accountant tests need Opacus and torch: pip install 'certify[opacus]'"
DELTA = 1e-5
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


def _exact(x: float) -> str:
    f = Fraction(x)
    return f"{f.numerator}/{f.denominator}"


def _frac(q) -> Fraction:
    return Fraction(int(q.p), int(q.q))


def _cli_pld(tmp_path, sigma: float, q: float, steps: int, grid: str) -> dict:
    out = tmp_path / "cli.json"
    argv = ["dpsgd", "--sampling", "poisson", "--accountant", "pld", "--grid", grid, "--sampling-rate", _exact(q)]
    argv += ["--noise-multiplier", _exact(sigma), "--steps", str(steps), "--delta", _exact(DELTA), "--out", str(out)]
    assert cli.main(argv) == 0
    return json.loads(out.read_text())


@pytest.mark.slow  # two certified PLD queries, their check and Opacus's PRV accountant: about 2.5 CPU s
def test_the_pld_accountant_is_the_certified_pld_of_the_history(opacus, tmp_path, capsys):
    from opacus.accountants import PRVAccountant, create_accountant

    from certify.opacus import CertifiedAccountant, CertifiedPldAccountant

    acc = create_accountant(mechanism="certified-pld")
    assert isinstance(acc, CertifiedPldAccountant) and acc.mechanism() == "certified-pld"
    assert acc.get_epsilon(DELTA) == 0.0  # no step: the data was never touched
    for _ in range(100):
        acc.step(noise_multiplier=1.1, sample_rate=0.05)
    assert acc.history == [(1.1, 0.05, 100)] and len(acc) == 100

    eps = acc.get_epsilon(DELTA, grid="1e-3")
    cert = acc.certificate(DELTA, grid="1e-3")
    assert verify_text(cert.dumps()).exit_code == 0
    assert cert.kind == "pld/dpsgd" and cert.inputs["noise_multiplier"] == _exact(1.1) and cert.inputs["sampling_rate"] == _exact(0.05)
    up = _frac(ball_endpoints(cert.quantities["epsilon_upper"].value)[1])
    low = _frac(ball_endpoints(cert.quantities["epsilon_lower"].value)[0])
    assert up <= Fraction(eps) and eps <= float(up) * (1 + 2**-52)  # the double just above the certified bound
    assert json.loads(cert.dumps()) == _cli_pld(tmp_path, 1.1, 0.05, 100, "1e-3")  # the command line on the same floats
    capsys.readouterr()

    renyi = CertifiedAccountant()
    renyi.history = list(acc.history)
    assert eps < renyi.get_epsilon(DELTA)  # the PLD is tighter than the Rényi bound

    prv = PRVAccountant()
    prv.history = list(acc.history)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = prv.get_epsilon(DELTA)  # Opacus's float PRV estimate (its upper value)
    assert abs(eps / theirs - 1) < 0.01, (eps, theirs)
    assert float(low) <= theirs * (1 + 1e-3)  # a certified lower bound on eps(delta) cannot be far above a float estimate

    state = json.loads(json.dumps(acc.state_dict()))  # round-trips, mechanism checked
    assert state["mechanism"] == "certified-pld"
    other = CertifiedPldAccountant()
    other.load_state_dict(state)
    assert other.history == acc.history and other.get_epsilon(DELTA, grid="1e-3") == eps
    with pytest.raises(ValueError, match="mechanism"):
        CertifiedAccountant().load_state_dict(state)


def test_refusals(opacus):
    from certify.opacus import CertifiedPldAccountant

    acc = CertifiedPldAccountant()
    with pytest.raises(InputError, match="history"):
        acc.certificate(DELTA)
    acc.step(noise_multiplier=1.0, sample_rate=0.02)
    acc.step(noise_multiplier=2.0, sample_rate=0.02)
    with pytest.raises(InputError, match="one .noise_multiplier, sample_rate. phase"):
        acc.get_epsilon(DELTA)
    with pytest.raises(InputError, match="delta"):
        CertifiedPldAccountant().get_epsilon(float("nan"))
    with pytest.raises(InputError, match="result"):
        acc.result(DELTA)


def test_register_is_one_call_for_both_names(opacus):
    from opacus.accountants import RDPAccountant, create_accountant, register_accountant

    import certify.opacus
    from certify.opacus import CertifiedAccountant, CertifiedPldAccountant

    assert certify.opacus.register() is CertifiedAccountant  # idempotent
    assert type(create_accountant(mechanism="certified-pld")) is CertifiedPldAccountant
    register_accountant("certified-pld", RDPAccountant, force=True)
    try:
        with pytest.raises(ValueError, match="'certified-pld' is already registered"):
            certify.opacus.register()
    finally:
        register_accountant("certified-pld", CertifiedPldAccountant, force=True)


@pytest.mark.slow  # a bisection of certified PLD queries and a few steps of torch: about 10 CPU s
def test_training_and_calibration_with_the_pld_accountant(opacus, tmp_path):
    import torch
    from opacus.accountants.utils import get_noise_multiplier
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    from certify.opacus import CertifiedPldAccountant

    torch.manual_seed(0)
    x, y = torch.randn(64, 4), torch.randn(64, 1)
    engine = opacus.PrivacyEngine(accountant="certified-pld")
    assert isinstance(engine.accountant, CertifiedPldAccountant)
    model = nn.Linear(4, 1)
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
    assert engine.accountant.history == [(1.1, 0.25, 8)]
    eps = engine.get_epsilon(DELTA)
    cert = engine.accountant.certificate(DELTA)
    assert verify_text(cert.dumps()).exit_code == 0
    assert Fraction(eps) >= _frac(ball_endpoints(cert.quantities["epsilon_upper"].value)[1])

    # Opacus's own calibration, unchanged, through the PLD accountant (grid passed through its **kwargs)
    sigma = get_noise_multiplier(target_epsilon=2.0, target_delta=DELTA, sample_rate=0.1, steps=50, accountant="certified-pld", grid="1e-3")
    acc = CertifiedPldAccountant()
    acc.history = [(sigma, 0.1, 50)]
    assert acc.get_epsilon(DELTA, grid="1e-3") <= 2.0
    sigma_renyi = get_noise_multiplier(target_epsilon=2.0, target_delta=DELTA, sample_rate=0.1, steps=50, accountant="certified")
    assert sigma < sigma_renyi
