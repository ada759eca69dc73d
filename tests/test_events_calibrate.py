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
