"""The forger's test suite: `certify verify` proves what a certificate concludes, or rejects it.

A forger regenerates a certificate with the registered evaluator at parameters that violate a
hypothesis or make the conclusion false, then re-seals it with a recomputed digest, so that the
certificate is self-consistent. Where the evaluator itself now validates its inputs (steps, delta,
batch size, ...), the forger is simulated with those validators switched off while regenerating
(the old, unvalidated evaluators); the checker's validators are then the real ones. Every forgery
must be rejected with a message naming the failed hypothesis or conclusion: exit 5 (consistent but
proves nothing) or 4 (inconsistent). The checks every kind must pass (genuine certificates at 1x, 2x and 4x
their precision, closed schema, edited bounds, truncated files) are in test_kind_conformance.py. Finally,
hostile files and options to `certify verify` end with one line on stderr and exit 2.
"""

import copy
import json
import os
import subprocess
import sys

import pytest

from certify.balls import InputError, ctx, exact, exact_int
from certify.certificate import MAX_BYTES, digest_of, load
from certify.contract import POISSON_ADD_REMOVE
from certify.verify import registered_kinds, spec_for, verify_document

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --------------------------------------------------------------------------------------------
# Genuine certificates of every kind (small, fast parameter sets)
# --------------------------------------------------------------------------------------------
def _doc(cert):
    cert = getattr(cert, "certificate", cert)
    return json.loads(cert.dumps())


@pytest.fixture(scope="module")
def genuine():
    """Every kind's registered example (the conformance suite's), plus variants the forger cases need."""
    from certify.dpsgd.accountant import certify_rho
    from certify.dpsgd.problem import Problem
    from certify.objpert import tables as T
    from certify.objpert.certificates import certify_theorem_4_1
    from certify.pld import certify_pld

    docs = {kind: _doc(spec_for(kind).example()) for kind in registered_kinds()}
    docs.update(
        {
            "objpert/theorem-4.1 smallest N": _doc(certify_theorem_4_1(T.example_problem("1/100"), "1")),
            "dpsgd/rho-bok prop2a": _doc(certify_rho(Problem(12, exact("1/100"), exact("2")))),
            "pld/dpsgd poisson": _doc(certify_pld(POISSON_ADD_REMOVE, "1/100", "2", 20, "1e-5", grid="1e-3")),
        }
    )
    return docs


def _poisson_schedule(q, sigma, steps):
    from certify.poisson.schedule import parse_schedule

    return parse_schedule([{"sampling_rate": q, "noise_multiplier": sigma, "steps": steps}], contract=POISSON_ADD_REMOVE)


def regenerate(doc, inputs=None, witnesses=None, drop=()):
    """A self-consistent forgery: edit inputs/witnesses, re-run the registered evaluator, re-seal."""
    d = copy.deepcopy(doc)
    d["inputs"].update(inputs or {})
    for k in drop:
        d["inputs"].pop(k, None)
    if witnesses is not None:
        witnesses(d["witnesses"])
    precision_of = spec_for(d["kind"]).precision_of
    if precision_of is not None and witnesses is not None:  # the precision the producer records for them (PLD: K + 96)
        try:
            d["precision"] = precision_of(d["witnesses"])
        except (KeyError, TypeError, ValueError):
            pass
    ev = _evaluate_rederiving_reports(d, doc["witnesses"])
    d["quantities"] = {k: q.to_json() for k, q in ev.quantities.items()}
    d["claims"] = [c.to_json() for c in ev.claims]
    d["conclusions"] = [c.to_json() for c in ev.conclusions]
    d["budget"] = ev.budget.to_json()
    return reseal(d)


#: the witnesses that report a bound (certify writes the re-derived ball's upper decimal there)
REPORTED = {
    "witnesses.reported_epsilon": "reported_epsilon",
    "witnesses.reported_rho": "reported_rho",
    "witnesses.reported_delta": "reported_delta",
    "epsilon_bound": "epsilon_bound",
}


def _evaluate_rederiving_reports(d, original_witnesses):
    """The evaluator on the forged inputs; a reported bound the forger left as it was is re-derived the way certify
    writes it (a forger with certify's code does that too), one the forger edited is left as edited."""
    import re

    for _ in range(3):
        try:
            with ctx.workprec(d["precision"]):
                return spec_for(d["kind"]).evaluator(d["inputs"], d["witnesses"])
        except InputError as err:
            key = REPORTED.get(err.parameter)
            m = re.search(r"certify writes: (\S+) \(", err.message)
            if key is None or m is None or d["witnesses"].get(key) != original_witnesses.get(key):
                raise
            d["witnesses"][key] = m.group(1)
    raise AssertionError("the reported bound could not be re-derived")


def _lying_report_refused(doc, edit, key):
    """A reported bound other than the one certify writes (here: below the certified bound) cannot be regenerated (the
    evaluator refuses it) and, re-sealed, is refused as inconsistent naming the witness."""
    with pytest.raises(InputError, match=key):
        regenerate(doc, witnesses=edit)
    d = copy.deepcopy(doc)
    edit(d["witnesses"])
    rejected(reseal(d), 4, key)


def reseal(d):
    d["digest"] = digest_of(d)
    return d


def rejected(doc, code, *needles):
    rep = verify_document(doc)
    assert rep.exit_code == code, (rep.exit_code, rep.problems)
    text = " ".join(rep.problems)
    for n in needles:
        assert n in text, (n, rep.problems)
    return rep


def test_variants_verify(genuine):
    """The forger's extra genuine variants pass (every registered example is checked by test_kind_conformance)."""
    for name in ("objpert/theorem-4.1 smallest N", "dpsgd/rho-bok prop2a", "pld/dpsgd poisson"):
        rep = verify_document(copy.deepcopy(genuine[name]))
        assert rep.exit_code == 0 and rep.ok, (name, rep.problems)
        assert regenerate(genuine[name]) == genuine[name], name


# --------------------------------------------------------------------------------------------
# Watkins-Arora: Theorem 4.1, Theorem C.13, the Gaussian benchmark, the calibrations
# --------------------------------------------------------------------------------------------
def _reported_delta_edit(doc, N):
    """Example 4.8 at iteration count N, with the delta the evaluator computes there reported honestly."""

    def at(w):
        w["iterations"] = N

    return regenerate(doc, {"iterations": str(N)}, at)  # (regenerate re-derives the reported delta as certify writes it)


def test_example_4_8_below_threshold_7(genuine):
    forged = _reported_delta_edit(genuine["objpert/theorem-4.1"], 1000)
    assert [c["holds"] for c in forged["claims"] if c["name"] == "dp_4_1"] == [True]
    rep = rejected(forged, 5, "threshold7_holds", "N = 1000 satisfies (7)")
    assert any(not h for _, h, _ in rep.conclusions)


def test_reported_delta_1e_20(genuine):
    def edit(w):
        w["reported_delta"] = "1e-20"

    _lying_report_refused(genuine["objpert/theorem-4.1"], edit, "reported_delta")


def test_epsilon_below_eps0(genuine):
    doc = genuine["objpert/theorem-4.1"]

    def edit(w):
        w.pop("theorem_C13")

    forged = regenerate(doc, {"epsilon": "1/100"}, edit, drop=("target_delta",))
    rejected(forged, 5, "epsilon_admissible")


def test_smallest_n_that_is_not_smallest(genuine):
    doc = genuine["objpert/theorem-4.1 smallest N"]
    N = doc["witnesses"]["iterations"]

    def edit(w):
        w["iterations"] = N + 5

    rejected(regenerate(doc, witnesses=edit), 5, "threshold7_smallest", f"N = {N + 5} is the smallest")


def _truncate_failures(w, N1):
    runs = []
    for run in w["theorem_C13"]["failures"]:
        if run["from"] >= N1:
            break
        runs.append(dict(run, to=min(run["to"], N1 - 1)))
    w["theorem_C13"]["failures"] = runs
    w["theorem_C13"]["first_passing_iterations"] = N1


def test_c13_first_passing_300(genuine):
    forged = regenerate(genuine["objpert/theorem-4.1"], witnesses=lambda w: _truncate_failures(w, 300))
    rep = rejected(forged, 5, "N = 300", "does not hold")
    assert "first_passing_c13" in json.dumps(forged["conclusions"])
    assert any("radius_condition" in p or "dp_C13" in p or "epsilon_above_s_N" in p or "alpha_bar" in p for p in rep.problems)


def test_c13_calibration_first_passing_too_small(genuine):
    doc = genuine["objpert/calibration-C13"]
    N1 = doc["witnesses"]["theorem_C13"]["first_passing_iterations"]
    forged = regenerate(doc, witnesses=lambda w: _truncate_failures(w, N1 - 1))
    rejected(forged, 5, f"N = {N1 - 1}")


def test_c13_calibration_bracket_pass_edited(genuine):
    doc = genuine["objpert/calibration-C13"]
    b = doc["witnesses"]["sigma_bracket"]

    def edit(w):  # a "pass" just above the certified failure, where the target is not met
        w["sigma_bracket"]["pass"] = str(exact(b["fail"]) * (1 + exact("1e-12")))

    with pytest.raises(InputError, match="not the bracket the bisection leaves"):  # the checker re-runs the bisection
        regenerate(doc, witnesses=edit)
    forged = reseal(copy.deepcopy(doc))
    edit(forged["witnesses"])
    rejected(reseal(forged), 4, "not the bracket the bisection leaves")


def test_calibration_with_10_iterations(genuine):
    def edit(w):
        w["iterations"] = 10

    forged = regenerate(genuine["objpert/calibration-4.13"], witnesses=edit)
    rep = rejected(forged, 5, "threshold7_holds", "N = 10 is the smallest N satisfying (7) and c_N <= eps/4")
    assert sum(not h for _, h, _ in rep.conclusions) >= 2  # the DP conclusion and the minimality


def test_calibration_n_one_above_the_smallest(genuine):
    doc = genuine["objpert/calibration-4.13"]
    N = doc["witnesses"]["iterations"]

    def edit(w):
        w["iterations"] = N + 1

    rejected(regenerate(doc, witnesses=edit), 5, "smaller_counts_fail", f"N = {N + 1} is the smallest")


def test_gaussian_benchmark_below_floor(genuine, monkeypatch):
    import certify.objpert.certificates as OC

    doc = genuine["objpert/gaussian-benchmark"]
    with monkeypatch.context() as m:  # the forger's evaluator does not validate
        m.setattr(OC, "validate_gaussian_benchmark", lambda i: (exact(i["noise_multiplier"]), exact(i["epsilon"])))
        forged = regenerate(doc, {"epsilon": "1/100"})
    assert [c["holds"] for c in forged["claims"] if c["name"] == "epsilon_admissible"] == [False]
    rejected(forged, 5, "hypothesis fails", "epsilon", "G^2/(2 sigma^2)")


def test_referee_epsilon_upper_1(genuine):
    def edit(w):
        w["epsilon_upper"], w["epsilon_lower"] = "1", "1/2"

    with pytest.raises(InputError, match="not the bracket the search leaves"):  # the checker re-runs the search
        regenerate(genuine["referee/objpert-rdp"], witnesses=edit)
    forged = copy.deepcopy(genuine["referee/objpert-rdp"])
    edit(forged["witnesses"])
    rejected(reseal(forged), 4, "not the bracket the search leaves")


def test_referee_reported_delta_too_small(genuine):
    def edit(w):
        w["reported_delta"] = "1e-30"

    _lying_report_refused(genuine["referee/objpert-rdp"], edit, "reported_delta")


# --------------------------------------------------------------------------------------------
# DP-SGD: Bok (rho, renyi), Wang, Birrell
# --------------------------------------------------------------------------------------------
def _permissive(monkeypatch_ctx, module, *names):
    for n in names:
        if n == "parse_steps":
            monkeypatch_ctx.setattr(module, n, lambda v, name="steps": exact_int(v, name))
        elif n == "parse_delta":
            monkeypatch_ctx.setattr(module, n, lambda v, name="delta": exact(v, name))
        elif n == "check_batch":
            monkeypatch_ctx.setattr(module, n, lambda inputs, p, names=None: None)


@pytest.mark.parametrize("kind", ["dpsgd/renyi-wang", "dpsgd/renyi-birrell", "dpsgd/renyi-bok"])
@pytest.mark.parametrize(
    "edit,needle",
    [
        ({"steps": "-1000"}, "steps: must be an integer >= 1, got -1000"),
        ({"steps": "0"}, "steps: must be an integer >= 1, got 0"),
        ({"delta": "2"}, "delta: must be in (0, 1), got 2"),
    ],
)
def test_steps_and_delta_out_of_range(genuine, monkeypatch, kind, edit, needle):
    import certify.dpsgd.baselines.certificates as BC
    import certify.dpsgd.certificates as DC

    doc = genuine[kind]
    with monkeypatch.context() as m:
        _permissive(m, BC if kind != "dpsgd/renyi-bok" else DC, "parse_steps", "parse_delta")
        # (the baselines' alpha witness: the forger re-chooses it as the producer does, at the edited inputs)
        wedit = None
        if kind != "dpsgd/renyi-bok":
            best = BC._evaluate(kind.rsplit("-", 1)[-1], dict(doc["inputs"], **edit), None)[1]
            wedit = lambda w: w.update(alpha=best)  # noqa: E731
        forged = regenerate(doc, edit, wedit)
    assert not all(c["holds"] for c in forged["conclusions"])  # the range claims fail too
    rep = rejected(forged, 5, "hypothesis fails", needle)
    assert rep.hypothesis_failures


def test_batch_size_dataset_size_disagree_with_p(genuine, monkeypatch):
    import certify.dpsgd.certificates as DC

    doc = genuine["dpsgd/renyi-bok"]
    assert doc["inputs"]["dataset_size"] == "600"
    with monkeypatch.context() as m:
        _permissive(m, DC, "check_batch")
        forged = regenerate(doc, {"dataset_size": "6000"})
    rejected(forged, 5, "batch_size", "disagrees with the sampling rate")


def test_batch_size_without_dataset_size(genuine):
    doc = copy.deepcopy(genuine["dpsgd/renyi-bok"])
    doc["inputs"].pop("dataset_size")
    rejected(reseal(doc), 5, "go together")


@pytest.mark.parametrize(
    "kind,key",
    [
        ("dpsgd/rho-bok", "reported_rho"),
        ("dpsgd/renyi-bok", "reported_epsilon"),
        ("dpsgd/renyi-wang", "reported_epsilon"),
        ("dpsgd/renyi-birrell", "reported_epsilon"),
    ],
)
def test_reported_bound_below_the_certified_one(genuine, kind, key):
    def edit(w):
        w[key] = "1e-5"

    _lying_report_refused(genuine[kind], edit, key)


@pytest.mark.parametrize("gamma,needle", [("1/1024", "gamma"), ("0", "gamma"), ("2", "gamma"), ("x", "gamma"), ("1/3", "gamma")])
def test_edited_gamma(genuine, gamma, needle):
    for kind in ("dpsgd/rho-bok", "dpsgd/renyi-bok"):
        doc = copy.deepcopy(genuine[kind])
        doc["witnesses"]["gamma"] = gamma
        with pytest.raises(InputError):
            regenerate(doc)  # the evaluator refuses it: the forger cannot make it consistent
        rejected(reseal(doc), 4, needle)


def test_gamma_recorded_as_input_must_match(genuine):
    doc = copy.deepcopy(genuine["dpsgd/rho-bok"])
    doc["inputs"]["gamma"] = "1/1048576"
    rejected(reseal(doc), 4, "witnesses.gamma")


# --------------------------------------------------------------------------------------------
# The closed schema (the per-kind checks are in test_kind_conformance.py)
# --------------------------------------------------------------------------------------------
def test_edited_iteration_description(genuine):
    d = copy.deepcopy(genuine["objpert/calibration-4.13"])
    d["quantities"]["iterations"]["description"] = "some N"
    rejected(reseal(d), 4, "iterations: description")


def test_old_schema_rejected(genuine):
    d = copy.deepcopy(genuine["objpert/gaussian-benchmark"])
    d["schema"] = "certify/1"
    d.pop("conclusions")
    with pytest.raises(InputError, match="no longer accepted"):
        load(json.dumps(d))


def test_unknown_top_level_key(genuine):
    d = copy.deepcopy(genuine["objpert/gaussian-benchmark"])
    d["verified_by"] = "me"
    with pytest.raises(InputError, match="unknown top-level"):
        load(json.dumps(d))


def test_software_is_not_vouched_for(genuine):
    d = copy.deepcopy(genuine["objpert/gaussian-benchmark"])
    d["software"] = {"certify": "99", "python-flint": "0.1"}  # other versions: informational, not vouched for
    rep = verify_document(d)
    assert rep.ok and any("not vouched for" in n and "software" in n for n in rep.notes)
    for bad in ({"certify": "99"}, {"certify": "0.1.0\r(0.1, 1/100000)-DP: HOLDS", "python-flint": "0.9.0"}, None, []):
        d["software"] = bad  # but spelt as certify writes it: no missing key, no control character
        assert verify_document(d).exit_code == 4


def test_huge_ball_refused_without_arithmetic(genuine):
    d = copy.deepcopy(genuine["objpert/gaussian-benchmark"])
    d["quantities"]["epsilon_floor"]["ball"]["rad"] = ["1", 10**12]
    rejected(reseal(d), 4, "out of range")


# --------------------------------------------------------------------------------------------
# The command line: conclusions first, exit codes 0 / 4 / 5 / 2, hostile files and options
# --------------------------------------------------------------------------------------------
def run(args, **kw):
    return subprocess.run([sys.executable, "-m", "certify", *args], capture_output=True, text=True, cwd=ROOT, timeout=120, **kw)


def test_cli_exit_codes_and_output(genuine, tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(genuine["objpert/theorem-4.1"], indent=2) + "\n")
    r = run(["verify", str(good)])
    assert r.returncode == 0 and r.stdout.startswith("conclusion: after N = 1500 iterations") and "VERIFIED" in r.stdout
    for factor in (2, 4):
        assert run(["verify", str(good), "--precision", str(128 * factor)]).returncode == 0
    bad = tmp_path / "bad.json"
    forged = _reported_delta_edit(genuine["objpert/theorem-4.1"], 1000)
    bad.write_text(json.dumps(forged, indent=2) + "\n")
    r = run(["verify", str(bad)])
    assert r.returncode == 5, r.stdout + r.stderr
    assert r.stdout.splitlines()[0].endswith(")") and "DOES NOT HOLD" in r.stdout.splitlines()[0]
    assert "threshold7_holds" in r.stdout and "NOT PROVED" in r.stderr and len(r.stderr.splitlines()) == 1
    inconsistent = copy.deepcopy(genuine["objpert/theorem-4.1"])
    inconsistent["inputs"]["note"] = "x"
    bad.write_text(json.dumps(reseal(inconsistent), indent=2) + "\n")
    r = run(["verify", str(bad)])
    assert r.returncode == 4 and "unknown input" in r.stderr and len(r.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    "content",
    [
        b"\xff\xfe\x00garbage",
        b"[" * 100000 + b"]" * 100000,
        b'{"schema": "certify/2", "precision": ' + b"9" * 5000 + b"}",
        b"",
    ],
    ids=["non-utf8", "nested-100000", "huge-integer", "empty"],
)
def test_cli_hostile_files(tmp_path, content):
    f = tmp_path / "c.json"
    f.write_bytes(content)
    r = run(["verify", str(f)])
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr


def test_cli_huge_file_refused_before_reading(tmp_path):
    f = tmp_path / "huge.json"
    with open(f, "wb") as fh:
        fh.truncate(MAX_BYTES + 1)  # sparse: nothing is written
    r = run(["verify", str(f)])
    assert r.returncode == 2 and "larger than" in r.stderr and len(r.stderr.splitlines()) == 1


@pytest.mark.parametrize("prec", ["1000000", "0", "-5", "52", "65537", "1e6", "abc"])
def test_cli_precision_out_of_range(genuine, tmp_path, prec):
    f = tmp_path / "c.json"
    f.write_text(json.dumps(genuine["objpert/gaussian-benchmark"]))
    r = run(["verify", str(f), f"--precision={prec}"])
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    assert "precision" in r.stderr


def test_cli_directory_and_missing_file(tmp_path):
    for path in (str(tmp_path), str(tmp_path / "missing.json")):
        r = run(["verify", path])
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr


# --------------------------------------------------------------------------------------------
# The Poisson Rényi accountant and its calibration's failing side
# --------------------------------------------------------------------------------------------
def test_poisson_claimed_epsilon_below_the_certified_one(genuine):
    def edit(w):
        w["epsilon_bound"] = "1"

    rejected(regenerate(genuine["dpsgd/renyi-poisson"], witnesses=edit), 5, "the run is (1, 1/100000)-DP", "claim fails")


@pytest.mark.parametrize(
    "edit,needle",
    [
        ({"phase[0].steps": "-1000"}, "steps"),
        ({"phase[0].steps": "0"}, "steps"),
        ({"delta": "2"}, "delta"),
        ({"phase[0].sampling_rate": "3/2"}, "sampling_rate"),
        ({"phase[0].noise_multiplier": "0"}, "noise_multiplier"),
        ({"adjacency": "replace-one", "sensitivity": "2C"}, "sampling"),
        ({"sampling": "shuffling"}, "shuffl"),
        ({"privacy_unit": "one user"}, "privacy_unit"),
    ],
)
def test_poisson_hypotheses(genuine, edit, needle):
    doc = copy.deepcopy(genuine["dpsgd/renyi-poisson"])
    doc["inputs"].update(edit)
    rejected(reseal(doc), 5, needle)


def test_poisson_fails_side_that_does_not_fail(genuine):
    # the failing side of a calibration at a sigma that meets the target: the claim "fails" is false
    rejected(regenerate(genuine["dpsgd/renyi-poisson-fails"], {"phase[0].noise_multiplier": "4"}), 5, "fails")


def test_poisson_unknown_phase_field(genuine):
    d = copy.deepcopy(genuine["dpsgd/renyi-poisson"])
    d["inputs"]["phase[0].clip_norm"] = "1"
    rejected(reseal(d), 4, "phase[0].clip_norm")


def test_bok_certificate_records_its_contract(genuine):
    doc = genuine["dpsgd/renyi-bok"]
    assert doc["inputs"]["sampling"] == "fixed-size" and doc["inputs"]["adjacency"] == "replace-one"
    assert doc["inputs"]["sensitivity"] == "2C"
    for kind in ("dpsgd/renyi-bok", "dpsgd/renyi-wang", "dpsgd/renyi-birrell"):
        d = copy.deepcopy(genuine[kind])
        d["inputs"].update({"sampling": "poisson", "adjacency": "add-remove", "sensitivity": "C"})
        rejected(reseal(d), 5, "fixed-size + replace-one")


# --------------------------------------------------------------------------------------------
# The certified PLD accountant
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["pld/dpsgd", "pld/dpsgd poisson"])
def test_pld_epsilon_upper_below_the_certified_one(genuine, kind):
    def edit(w):
        w["epsilon_upper"] = "1/100"

    # the read-off points are the ones the producer's searches leave (issue 21): the evaluator refuses the edit, and the
    # re-sealed file with the stale quantities is refused as well (before, a regenerated file ended "not proved", exit 5)
    with pytest.raises(InputError, match="epsilon_upper is not the point the read-off search leaves"):
        regenerate(genuine[kind], witnesses=edit)
    doc = copy.deepcopy(genuine[kind])
    edit(doc["witnesses"])
    rejected(reseal(doc), 4, "epsilon_upper")


def test_pld_epsilon_lower_above_the_exact_one(genuine):
    def edit(w):
        w["epsilon_lower"] = "1/10"  # the composed pair's exact eps(1e-5) is about 0.088 < 0.1

    with pytest.raises(InputError, match="epsilon_lower is not the point the read-off search leaves"):
        regenerate(genuine["pld/dpsgd poisson"], witnesses=edit)
    doc = copy.deepcopy(genuine["pld/dpsgd poisson"])
    edit(doc["witnesses"])
    rejected(reseal(doc), 4, "epsilon_lower")


@pytest.mark.parametrize(
    "edit,needle",
    [
        ({"steps": "-20"}, "steps"),
        ({"delta": "2"}, "delta"),
        ({"grid": "0"}, "grid"),
        ({"sampling": "poisson", "adjacency": "add-remove"}, "sensitivity"),
        ({"sampling": "shuffling"}, "shuffl"),
    ],
)
def test_pld_hypotheses(genuine, edit, needle):
    doc = copy.deepcopy(genuine["pld/dpsgd"])
    doc["inputs"].update(edit)
    rejected(reseal(doc), 5, needle)
