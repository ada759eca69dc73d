"""`certify calibrate-event`: the smallest certified noise of an event family, as a certified bracket."""

import copy
import json

import mpmath as mp
import pytest

from certify import cli
from certify.accounting import calibrate_noise
from certify.balls import InputError, fmpq
from certify.certificate import digest_of
from certify.events.calibrate import substitute
from certify.verify import verify_document

GAUSS = {"class_name": "SelfComposedDpEvent", "count": 10, "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "$noise"}}


def _reference_gaussian_eps(z, count, delta) -> mp.mpf:
    """The calibrated accountant in mpmath, independently: min over its orders of count alpha/(2 z^2) + conversion."""
    orders = list(range(2, 257)) + [288, 320, 384, 448, 512, 640, 768, 896, 1024, 1280, 1536, 2048, 2560, 3072, 4096]
    z, d = mp.mpf(z), mp.mpf(delta)
    return min(count * a / (2 * z * z) + mp.log(mp.mpf(a - 1) / a) - (mp.log(d) + mp.log(a)) / (a - 1) for a in orders)


def test_gaussian_bracket_is_certified_and_tight():
    mp.mp.dps = 50
    cal = calibrate_noise(GAUSS, "1", "1e-5")
    assert cal.s_fail < cal.s_pass and cal.relative_width <= fmpq(1, 10**4)
    s_pass, s_fail = (mp.mpf(int(x.p)) / int(x.q) for x in (cal.s_pass, cal.s_fail))
    assert _reference_gaussian_eps(s_pass, 10, "1e-5") <= 1 < _reference_gaussian_eps(s_fail, 10, "1e-5")
    for cert in (cal.passing, cal.failing):
        assert verify_document(json.loads(cert.dumps())).exit_code == 0


def test_poisson_family_agrees_with_calibrate_dpsgd():
    """The same accountant as `certify calibrate-dpsgd` (q = 1/100, T = 1000, (1, 1e-5)): its bracket holds 1.51312."""
    fam = {
        "class_name": "SelfComposedDpEvent",
        "count": 1000,
        "event": {
            "class_name": "PoissonSampledDpEvent",
            "sampling_probability": "1/100",
            "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "$noise"},
        },
    }
    cal = calibrate_noise(fam, 1.0, 1e-5)
    assert cal.s_fail <= fmpq(1513120, 10**6) <= cal.s_pass


def test_forged_failing_side_is_refused():
    cal = calibrate_noise(GAUSS, "1", "1e-5")
    doc = json.loads(cal.failing.dumps())
    doc["inputs"]["event[0].noise_multiplier"] = str(int(cal.s_pass.p) * 2) + "/" + str(int(cal.s_pass.q))  # a noise that passes
    doc["digest"] = digest_of(doc)
    try:
        code = verify_document(copy.deepcopy(doc)).exit_code
    except InputError:
        code = 2
    assert code in (4, 5)


def test_family_refusals(tmp_path, capsys):
    with pytest.raises(InputError, match="no noise field"):
        substitute({"class_name": "GaussianDpEvent", "noise_multiplier": "1"}, fmpq(1))
    with pytest.raises(InputError, match="only for a noise field"):
        substitute(
            {
                "class_name": "PoissonSampledDpEvent",
                "sampling_probability": "$noise",
                "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "1"},
            },
            fmpq(1),
        )
    eps_delta = {"class_name": "ComposedDpEvent", "events": [GAUSS, {"class_name": "EpsilonDeltaDpEvent", "epsilon": "2", "delta": "0"}]}
    with pytest.raises(InputError, match="no noise up to 2\\^40"):
        calibrate_noise(eps_delta, "1", "1e-5")
    path = tmp_path / "fam.json"
    path.write_text(json.dumps(GAUSS))
    out, fail = tmp_path / "p.json", tmp_path / "f.json"
    assert cli.main(["calibrate-event", str(path), "--epsilon", "1", "--delta", "1e-5", "--out", str(out), "--out-fail", str(fail)]) == 0
    assert "s_pass" in capsys.readouterr().out
    assert cli.main(["verify", str(fail)]) == 0
    assert cli.main(["calibrate-event", str(path), "--epsilon", "0", "--delta", "1e-5"]) == 2
    assert "--epsilon" in capsys.readouterr().err


def _poisson_family(k: int) -> dict:
    """k distinct Poisson-subsampled Gaussians (q = j/1000), each composed 100 times, sharing the noise."""
    return {
        "class_name": "ComposedDpEvent",
        "events": [
            {
                "class_name": "SelfComposedDpEvent",
                "count": 100,
                "event": {"class_name": "PoissonSampledDpEvent", "sampling_probability": f"{j}/1000", "event": dict(GAUSS["event"])},
            }
            for j in range(1, k + 1)
        ],
    }


@pytest.mark.parametrize("epsilon", ["1e-3", "1", "1000"])
def test_float_search_takes_at_most_its_fixed_number_of_steps(epsilon, monkeypatch):
    """The bracket search's float evaluations are bounded by search_steps() (2 ends + ceil(log2 80) + the value
    bisection to 1e-4/2 + the order choice = 2 + 7 + 15 + 1), whatever the answer (s about 6644, 12.8 or 0.1 here)."""
    from certify.events import calibrate as C

    assert C.search_steps() == 25
    calls = []
    real = C._float_eps
    monkeypatch.setattr(C, "_float_eps", lambda *a: calls.append(a[2]) or real(*a))
    cal = calibrate_noise(GAUSS, epsilon, "1e-5")
    assert cal.relative_width <= fmpq(1, 10**4)
    assert len(calls) <= C.search_steps() - 1  # the order choice of the passing side is not a bracket step


@pytest.mark.slow  # about 1.8 CPU s: three ledgers of 470 mechanisms
def test_over_budget_family_is_refused_before_any_evaluation(monkeypatch):
    """Above the checker's budget for the failing certificate (200 mechanisms: 34.5 s > 30 s), or above the budget of
    the whole calibration (170: 29.4 s to check the failing side, about 62 s in all > 60 s): refused naming ``event``
    before any float or ball evaluation; 100 mechanisms (about 38 s in all) are accepted."""
    from certify.events import calibrate as C

    monkeypatch.setattr(C, "_float_eps", lambda *a: pytest.fail("a float estimate was computed"))
    with pytest.raises(InputError, match=r"limit 30 s") as err:
        calibrate_noise(_poisson_family(200), "1", "1e-5")
    assert err.value.parameter == "event"
    with pytest.raises(InputError, match=r"limit 60 s") as err:
        calibrate_noise(_poisson_family(170), "1", "1e-5")
    assert err.value.parameter == "event"
    C.check_calibration_work(_poisson_family(100), "add-remove", 128)


@pytest.mark.slow  # about 4 CPU s: a sampling-without-replacement family
def test_search_ends_outside_a_mechanism_noise_range_do_not_stop_it():
    """Sampling without replacement takes noise in [1/100, 10^4] only: the search's ends 2^40 and 2^-40 lie outside,
    counted as passing and failing, and the bracket is found inside (the same as by doubling from 1: s_pass = 1.0278...)."""
    fam = {
        "class_name": "SampledWithoutReplacementDpEvent",
        "source_dataset_size": 1000,
        "sample_size": 13,
        "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "$noise"},
    }
    cal = calibrate_noise(fam, "1", "1e-5", "replace-one")
    assert fmpq(1, 100) < cal.s_fail < cal.s_pass < 10**4 and cal.relative_width <= fmpq(1, 10**4)
    assert cal.s_fail <= fmpq(1027832, 10**6) <= cal.s_pass
