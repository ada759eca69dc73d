"""Fixed-size + replace-one schedules of several phases: kind ``dpsgd/renyi-bok-schedule``.

Bok's certified one-step rho per phase, composed at one alpha (Rényi composition), converted by (6).
Checked against an independent composition: each phase's rho from its own ``dpsgd/rho-bok`` certificate,
composed and converted in mpmath at 60 digits; and, where Proposition 2 (a) puts the maximum at u = 0,
against the closed form J(0) evaluated by the separately written mpmath reference.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import mpmath as mp
import pytest

from certify.audit import audit, loads_claim
from certify.balls import InputError, ball_endpoints, ctx, exact
from certify.certificate import digest_of
from certify.contract import FIXED_SIZE_REPLACE_ONE
from certify.poisson.fixed_size import KIND, certify_fixed_size_schedule
from certify.poisson.schedule import parse_schedule
from certify.verify import spec_for, verify_document, verify_text

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_poisson import log_A_sum  # noqa: E402

PHASES = [("1/100", "2", 600), ("1/50", "3", 200)]


def _schedule(phases):
    return parse_schedule([{"sampling_rate": q, "noise_multiplier": s, "steps": t} for q, s, t in phases], contract=FIXED_SIZE_REPLACE_ONE)


def _mp(x):
    return mp.mpf(int(x.p)) / int(x.q)


def _convert(total, alpha, delta):
    a = mp.mpf(alpha)
    return total + mp.log(1 - 1 / a) - (mp.log(_mp(exact(delta))) + mp.log(a)) / (a - 1)


@pytest.fixture(scope="module")
def cert():
    return certify_fixed_size_schedule(_schedule(PHASES), "1e-6")


@pytest.fixture(scope="module")
def doc(cert):
    return json.loads(cert.dumps())


def test_certifies_and_verifies(cert, doc):
    assert cert.kind == KIND and all(c.holds for c in cert.conclusions)
    assert len(doc["witnesses"]["phases"]) == 2
    rep = verify_document(copy.deepcopy(doc))
    assert rep.exit_code == 0 and rep.ok, rep.problems
    assert verify_document(copy.deepcopy(doc), 2 * doc["precision"]).ok


def test_against_an_independent_composition(cert):
    """Each phase's rho from its own dpsgd/rho-bok certificate (same alpha), composed and converted in mpmath."""
    from certify.dpsgd.accountant import certify_rho
    from certify.dpsgd.problem import Problem

    alpha = int(cert.witnesses["alpha"])
    with mp.workdps(60):
        lo_tot, hi_tot = mp.mpf(0), mp.mpf(0)
        for q, s, t in PHASES:
            rho = certify_rho(Problem(alpha, exact(q), exact(s))).certificate.quantities["rho"].value
            lo, hi = ball_endpoints(rho)
            lo_tot += t * _mp(lo)
            hi_tot += t * _mp(hi)
        ref_lo, ref_hi = _convert(lo_tot, alpha, "1e-6"), _convert(hi_tot, alpha, "1e-6")
        lo, hi = ball_endpoints(cert.quantities["epsilon"].value)
        # the certificate's ball contains the independent enclosure's midpoint and agrees with it to 1e-12
        assert _mp(lo) <= (ref_lo + ref_hi) / 2 <= _mp(hi)
        assert abs(_mp(hi) - ref_hi) <= mp.mpf("1e-12") * ref_hi
    # and the composition is below running the worst phase's rho for all the steps
    assert cert.quantities["rdp_total"].value.upper() <= 800 * max(cert.quantities[f"phase[{i}].rho"].value.upper() for i in range(2))


def test_closed_form_when_the_maximum_is_at_u0():
    """p = 1/1000, sigma = 4 at alpha = 60: Proposition 2 (a) holds in both phases, rho = J(0) in closed form."""
    phases = [("1/1000", "4", 3000), ("1/1000", "4", 1000)]
    c = certify_fixed_size_schedule(_schedule(phases), "1e-5", alpha=60)
    assert [w["method"] for w in c.witnesses["phases"]] == ["prop2a", "prop2a"]
    with mp.workdps(60):
        j0 = log_A_sum(60, "1/1000", "2") / 59  # Delta = 2/sigma = 1/(sigma/2): the reference's sigma is 2
        ref = _convert(4000 * j0, 60, "1e-5")
        lo, hi = ball_endpoints(c.quantities["epsilon"].value)
        assert _mp(lo) <= ref <= _mp(hi) and (_mp(hi) - _mp(lo)) / ref < mp.mpf("1e-25")
    # two phases of the same (p, sigma) compose to the one-phase dpsgd/renyi-bok certificate at that alpha
    from certify.dpsgd.accountant import certify_dpsgd

    one = certify_dpsgd("1/1000", "4", 4000, "1e-5", 60).certificate.quantities["epsilon"].value
    a, b = ball_endpoints(one)[1], ball_endpoints(c.quantities["epsilon"].value)[1]
    assert abs(a - b) <= a / 10**30  # the same bound up to the last bits of ball arithmetic (3000 + 1000 vs 4000)


def _reseal(d):
    d["digest"] = digest_of(d)
    return d


def _regenerate(d):
    with ctx.workprec(d["precision"]):
        ev = spec_for(d["kind"]).evaluator(d["inputs"], d["witnesses"])
    d["quantities"] = {k: q.to_json() for k, q in ev.quantities.items()}
    d["claims"] = [c.to_json() for c in ev.claims]
    d["conclusions"] = [c.to_json() for c in ev.conclusions]
    d["budget"] = ev.budget.to_json()
    return _reseal(d)


def test_forger_edited_phase(doc):
    d = copy.deepcopy(doc)
    d["inputs"]["phase[1].noise_multiplier"] = "4"  # more noise in phase 1, the rest as recorded
    rep = verify_document(_reseal(d))
    assert rep.exit_code == 4, rep.problems
    d = copy.deepcopy(doc)
    d["inputs"]["phase[0].steps"] = "60"  # fewer steps in phase 0: rdp_total and epsilon disagree
    rep = verify_document(_reseal(d))
    assert rep.exit_code == 4 and any("rdp_total" in p or "epsilon" in p for p in rep.problems), rep.problems


def test_forger_dropped_phase(doc):
    d = copy.deepcopy(doc)
    for f in ("sampling_rate", "noise_multiplier", "steps"):
        del d["inputs"][f"phase[1].{f}"]
    d["inputs"]["phases"] = "1"
    rep = verify_document(_reseal(copy.deepcopy(d)))  # the second witness has no phase: refused
    assert rep.exit_code == 4 and any("one rho witness per phase" in p for p in rep.problems), rep.problems
    d["witnesses"]["phases"] = d["witnesses"]["phases"][:1]
    rep = verify_document(_reseal(copy.deepcopy(d)))  # consistent witnesses, but every number re-derived differs
    assert rep.exit_code == 4, rep.problems
    # a self-consistent forgery of the one-phase run proves that run only: its conclusion names 1 phase (the headline
    # bound re-derived as certify writes it)
    with ctx.workprec(d["precision"]):
        from certify.balls import upper_decimal

        try:  # the evaluator names the bound certify writes for the one-phase run
            spec_for(d["kind"]).evaluator(d["inputs"], d["witnesses"])
        except InputError as err:
            d["witnesses"]["epsilon_bound"] = err.message.split(": ")[1].split(" ")[0]
        eps = spec_for(d["kind"]).evaluator(d["inputs"], d["witnesses"]).quantities["epsilon"].value
        assert d["witnesses"]["epsilon_bound"] == upper_decimal(eps, 10)
    forged = _regenerate(d)
    assert verify_document(forged).ok and "1 phase(s), 600 steps" in forged["conclusions"][0]["statement"]


def test_forger_lower_epsilon_bound(doc):
    d = copy.deepcopy(doc)
    d["witnesses"]["epsilon_bound"] = "1/2"  # no producer of this kind writes a claimed bound: refused
    rep = verify_document(_reseal(d))
    assert rep.exit_code == 4 and any("epsilon_bound" in p for p in rep.problems), rep.problems


def test_refusals():
    with pytest.raises(InputError, match="alpha"):
        certify_fixed_size_schedule(_schedule(PHASES), "1e-6", alpha=257)
    with pytest.raises(InputError, match="at most 101"):  # sigma = 1/50 admits alpha <= 101 only (max_alpha)
        certify_fixed_size_schedule(_schedule([("1/100", "2", 10), ("1/100", "1/50", 10)]), "1e-6", alpha=200)
    with pytest.raises(InputError, match="sampling"):
        certify_fixed_size_schedule(_schedule([("1", "2", 10), ("1/2", "2", 10)]), "1e-6")
    with pytest.raises(InputError, match="delta"):
        certify_fixed_size_schedule(_schedule(PHASES), "1")
    with pytest.raises(InputError, match="at most 256 phases"):
        certify_fixed_size_schedule(_schedule([("1/100", "2", 1)] * 257), "1e-6")


def _run(*args):
    return subprocess.run([sys.executable, "-m", "certify", *args], capture_output=True, text=True, cwd=ROOT)


def test_cli_schedule_file(tmp_path):
    sch = tmp_path / "s.json"
    sch.write_text(
        json.dumps(
            {
                "contract": {"sampling": "fixed-size", "adjacency": "replace-one"},
                "phases": [{"sampling_rate": q, "noise_multiplier": s, "steps": t} for q, s, t in PHASES],
            }
        )
    )
    out = tmp_path / "c.json"
    r = _run("dpsgd", "--schedule", str(sch), "--delta", "1e-6", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "2 phases" in r.stdout and "fixed-size sampling, replace-one adjacency" in r.stdout
    assert verify_text(out.read_text()).ok
    r = _run("dpsgd", "--schedule", str(sch), "--delta", "1e-6", "--accountant", "wang", "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "--accountant" in r.stderr and not (tmp_path / "x").exists()
    r = _run("dpsgd", "--schedule", str(sch), "--delta", "1e-6", "--alpha", "300")
    assert r.returncode == 2 and "alpha" in r.stderr and r.stderr.count("\n") == 1


def test_audit_of_a_two_phase_fixed_size_claim():
    text = json.dumps(
        {
            "epsilon": "2.3",
            "delta": "1e-6",
            "contract": {"sampling": "fixed-size", "adjacency": "replace-one"},
            "schedule": [{"sampling_rate": q, "noise_multiplier": s, "steps": t} for q, s, t in PHASES],
        }
    )
    v = audit(loads_claim(text))
    assert v.outcome == "holds" and v.deciding.accountant == "bok"
    assert v.deciding.certificate.kind == KIND and verify_text(v.deciding.certificate.dumps()).ok


def test_api_dpsgd_epsilon_with_a_fixed_size_schedule(cert):
    from fractions import Fraction

    from certify.api import dpsgd_epsilon

    r = dpsgd_epsilon(
        sampling="fixed-size",
        adjacency="replace-one",
        delta="1e-6",
        schedule=[{"sampling_rate": q, "noise_multiplier": s, "steps": t} for q, s, t in PHASES],
    )
    assert r.accountant == "bok" and r.certificate.kind == KIND and r.alpha == Fraction(cert.witnesses["alpha"])
    assert r.epsilon_float >= r.epsilon and verify_text(r.dumps()).ok
    with pytest.raises(InputError, match="accountant"):
        dpsgd_epsilon(
            sampling="fixed-size",
            adjacency="replace-one",
            delta="1e-6",
            accountant="wang",
            schedule=[{"sampling_rate": q, "noise_multiplier": s, "steps": t} for q, s, t in PHASES],
        )
