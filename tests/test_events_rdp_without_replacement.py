"""SampledWithoutReplacementDpEvent of a Gaussian by RDP (certify/events/mechanisms/sampled_without_replacement.py).

Reference: WBK19 (arXiv:1808.00087) Thms 9 and 27 written here again in mpmath at 50 significant digits (the forward
differences summed at 600 digits so that their cancellation costs nothing), independently of the module's difference
table; soundness (reference inside the ball) and tightness (1e-6 relative: the ball encloses the same formula).
dp_accounting 0.6.0's float evaluation of the same bound (``rdp_privacy_accountant._compute_rdp_sample_wor_gaussian``)
must agree to 1e-9 relative; its own test file has one expectation for this event (``test_zero_fixed_batch_sample``).
"""

from __future__ import annotations

import json
import math

import mpmath as mp
import pytest

from certify import cli
from certify.accounting import RdpAccountant
from certify.balls import InputError, ball_endpoints, fmpq
from certify.events.accountant import certified_value, certify_events
from certify.events.ledger import ledger_of
from certify.verify import verify_document
from fast_subset import fast_subset


def wor(n, m, sigma, count=None):
    e = {
        "class_name": "SampledWithoutReplacementDpEvent",
        "source_dataset_size": n,
        "sample_size": m,
        "event": {"class_name": "GaussianDpEvent", "noise_multiplier": sigma},
    }
    return e if count is None else {"class_name": "SelfComposedDpEvent", "count": count, "event": e}


def mech(event):
    ((m, _),) = ledger_of(event, "replace-one").entries
    return m


def ref_log_A(alpha: int, gamma: mp.mpf, sigma: mp.mpf) -> mp.mpf:
    """log A(alpha) of WBK19 Thm 9 with the Thm 27 branch (alpha <= 256), from the theorem's statement."""
    with mp.workdps(600):
        eps = lambda j: mp.mpf(j) / (2 * sigma**2)  # noqa: E731  the Gaussian's RDP
        f = [mp.e ** ((k - 1) * eps(k)) for k in range(alpha + 2)]
        delta = [mp.fsum((-1) ** (ll - k) * mp.binomial(ll, k) * f[k] for k in range(ll + 1)) for ll in range(alpha + 2)]
        s = 1 + gamma**2 * mp.binomial(alpha, 2) * min(4 * mp.expm1(eps(2)), 2 * mp.e ** eps(2))
        for j in range(3, alpha + 1):
            b = 2 * mp.e ** ((j - 1) * eps(j))
            if alpha <= 256:
                d = delta[j] if j % 2 == 0 else mp.sqrt(delta[j - 1] * delta[j + 1])
                b = min(b, 4 * d)
            s += gamma**j * mp.binomial(alpha, j) * b
        return mp.log(s)


CASES = [(1000, 10, "1", 2), (1000, 10, "1", 32), (100, 30, "7/10", 8), (60000, 256, "11/10", 100), (1000, 1, "20", 256), (1000, 500, "3", 300)]


@pytest.mark.parametrize("n,m,sigma,alpha", fast_subset(CASES, keep=CASES[:3]))
def test_rdp_encloses_the_theorem_tightly(n, m, sigma, alpha):
    mp.mp.dps = 50
    s = fmpq(*map(int, sigma.split("/"))) if "/" in sigma else fmpq(int(sigma))
    ref = ref_log_A(alpha, mp.mpf(m) / n, mp.mpf(int(s.p)) / int(s.q)) / (alpha - 1)
    lo, hi = ball_endpoints(mech(wor(n, m, sigma)).rdp(fmpq(alpha), "replace-one"))
    lo, hi = mp.mpf(int(lo.p)) / int(lo.q), mp.mpf(int(hi.p)) / int(hi.q)
    assert lo <= ref <= hi
    assert (hi - lo) <= 1e-6 * ref


def test_fractional_order_is_the_chord_of_the_integer_bounds():
    mp.mp.dps = 50
    g, s = mp.mpf(10) / 1000, mp.mpf(1)
    ref = (mp.mpf(1) / 2 * ref_log_A(2, g, s) + mp.mpf(1) / 2 * ref_log_A(3, g, s)) / (mp.mpf(5) / 2 - 1)
    lo, hi = ball_endpoints(mech(wor(1000, 10, "1")).rdp(fmpq(5, 2), "replace-one"))
    assert mp.mpf(int(lo.p)) / int(lo.q) <= ref <= mp.mpf(int(hi.p)) / int(hi.q)
    lo, hi = ball_endpoints(mech(wor(1000, 10, "1")).rdp(fmpq(3, 2), "replace-one"))  # between 1 (log A = 0) and 2
    ref = mp.mpf(1) / 2 * ref_log_A(2, g, s) / (mp.mpf(1) / 2)
    assert mp.mpf(int(lo.p)) / int(lo.q) <= ref <= mp.mpf(int(hi.p)) / int(hi.q)


def test_full_sample_is_the_gaussian():
    lo, hi = ball_endpoints(mech(wor(50, 50, "2")).rdp(fmpq(7), "replace-one"))
    assert lo <= fmpq(7, 8) <= hi


@pytest.mark.parametrize("n,m,sigma", fast_subset([(1000, 10, 1.0), (100, 30, 0.7), (60000, 256, 1.1), (1000, 500, 3.0)], keep=[(1000, 500, 3.0)]))
def test_dp_accounting_float_evaluation_agrees(n, m, sigma):
    R = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    mm = mech(wor(n, m, sigma))
    for a in (2, 3, 10, 64, 256, 512):
        theirs = R._compute_rdp_sample_wor_gaussian_scalar(m / n, sigma, float(a))
        lo, hi = ball_endpoints(mm.rdp(fmpq(a), "replace-one"))
        assert abs(float(hi) / theirs - 1) < 1e-9 and abs(float(lo) / theirs - 1) < 1e-9


def test_dp_accounting_zero_fixed_batch_sample():
    """dp_accounting rdp_privacy_accountant_test.py, test_zero_fixed_batch_sample: a sample of size 0 gives epsilon 0."""
    acc = RdpAccountant(neighboring_relation="REPLACE_ONE")
    acc.compose(wor(1000, 0, 1.0))
    assert acc.get_epsilon(1e-10) == 0 and acc.get_delta(1e-10) == 0


def test_epsilon_matches_dp_accounting_and_verifies(tmp_path, capsys):
    dpa = pytest.importorskip("dp_accounting")
    theirs = dpa.rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    theirs.compose(dpa.SampledWithoutReplacementDpEvent(60000, 256, dpa.GaussianDpEvent(1.1)), 1000)
    cert = certify_events(ledger_of(wor(60000, 256, 1.1, 1000), "replace-one"), delta="1e-5")
    eps = float(certified_value(cert))
    assert theirs.get_epsilon(1e-5) * (1 - 1e-9) <= eps <= theirs.get_epsilon(1e-5) * 1.001
    assert "upper bound only" in cert.evaluation.claim_named("bound").statement
    assert verify_document(json.loads(cert.dumps())).exit_code == 0
    path = tmp_path / "wor.json"
    path.write_text(json.dumps(wor(60000, 256, 1.1, 1000)))
    assert cli.main(["account", str(path), "--neighboring", "add-remove", "--delta", "1e-5"]) == 2
    assert "replace-one only" in capsys.readouterr().err


@pytest.mark.parametrize(
    "event,pattern",
    [
        (wor(10, 11, 1), "sample_size.*integer in \\[0, 10\\]"),
        (wor(10, 2.5, 1), "sample_size"),
        (wor(0, 0, 1), "source_dataset_size"),
        (wor(10, 2, 0), "noise_multiplier"),
        (wor(10, 2, "1e-1000"), r"noise_multiplier.*in \[1/100, 10\^4\]"),
        (wor(10, 2, 10**5), r"noise_multiplier.*in \[1/100, 10\^4\]"),
        ({**wor(10, 2, 1), "event": {"class_name": "LaplaceDpEvent", "noise_multiplier": 1}}, "GaussianDpEvent only"),
    ],
)
def test_bad_parameters_are_refused_naming_them(event, pattern):
    with pytest.raises(InputError, match=pattern):
        ledger_of(event, "replace-one")


def test_work_is_bounded_at_the_largest_order():
    m = mech(wor(10**6, 1, "1/100"))
    assert m.work_seconds(fmpq(4096), 256) < 1 and math.isfinite(m.work_seconds(fmpq(256), 4096))


def test_verified_at_1x_2x_4x_precision_and_forgeries_refused():
    from certify.certificate import digest_of
    from certify.verify import verify_text

    cert = certify_events(ledger_of(wor(1000, 10, "1", 100), "replace-one"), delta="1e-6")
    text = cert.dumps()
    for bits in (128, 256, 512):
        assert verify_text(text, precision=bits).exit_code == 0, bits
    doc = json.loads(text)
    for field, value in (("event[0].sample_size", "5"), ("event[0].noise_multiplier", "2"), ("event[0].source_dataset_size", "2000")):
        d = json.loads(text)
        d["inputs"][field] = value
        d["digest"] = digest_of(d)
        try:
            code = verify_document(d).exit_code
        except InputError:
            code = 2
        assert code != 0, field
    assert doc["inputs"]["event[0].class"] == "SampledWithoutReplacementDpEvent"


@pytest.mark.slow
def test_extreme_noise_multipliers_certify_without_overflow():
    for sigma in ("1/100", "10000"):
        cert = certify_events(ledger_of(wor(1000, 10, sigma), "replace-one"), delta="1e-5")
        assert float(certified_value(cert)) > 0
