"""The kernel on kind events/rdp: each mechanism's Rényi divergence against the 50-digit references of
tests/test_events_rdp.py (direct sums and quadratures of the definitions, independent of both checkers), then both
checkers on genuine ledgers (every covered class, relation and query) and on their forgeries (the forger suites'
ball and decimal edits, edited parameters, bounds, orders and relations, regenerated certificates)."""

import copy
import json
import os
import sys
from fractions import Fraction

import mpmath as mp
import pytest

import certify_kernel
from certify_kernel import events
from certify_kernel.numbers import bounds, working_precision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_events_rdp import ref_laplace, ref_poisson, ref_rr, ref_rr_eps  # noqa: E402
from test_forger import regenerate, reseal  # noqa: E402
from test_forger19 import edits_of  # noqa: E402
from test_kernel_agreement import TRUE_BUT_NOT_REPRODUCED, _only_canonical_problems, certify_verdict  # noqa: E402

F = Fraction


def _mp(x: Fraction):
    return mp.mpf(x.numerator) / x.denominator


def _inside(cls, values, alpha, relation, ref, tight=Fraction(1, 10**40)):
    with working_precision(300):
        lo, hi = bounds(events.rdp_of(cls, values, alpha, relation, lambda integral, chord: integral))
    with mp.workdps(60):
        r = Fraction(mp.nstr(ref, 50))
    slack = abs(r) * Fraction(1, 10**45)
    assert lo <= r + slack and r - slack <= hi and hi - lo <= tight * max(1, abs(r)), (cls, values, alpha, relation)


@pytest.mark.parametrize("alpha", [F(3, 2), F(8), F(257, 4)])
def test_mechanisms_enclose_the_definitions(alpha):
    with mp.workdps(50):
        a = _mp(alpha)
        _inside("GaussianDpEvent", {"noise_multiplier": F(3, 2)}, alpha, "add-remove", a / (2 * _mp(F(9, 4))))
        _inside("LaplaceDpEvent", {"noise_multiplier": F(2)}, alpha, "replace-one", ref_laplace(a, 2))
        for rel in ("replace-one", "replace-special"):
            for p, k in ((F(1, 2), 4), (F(1, 10), 2), (F(9, 10), 7)):
                _inside("RandomizedResponseDpEvent", {"noise_parameter": p, "num_buckets": F(k)}, alpha, rel, ref_rr(a, _mp(p), k, rel))
        _inside("EpsilonDeltaDpEvent", {"epsilon": F(1, 2), "delta": F(1, 10**6)}, alpha, "add-remove", ref_rr_eps(a, mp.mpf(1) / 2))
        _inside("ZCDpEvent", {"rho": F(1, 100), "xi": F(1, 1000)}, alpha, "replace-special", mp.mpf(1) / 1000 + a / 100)


@pytest.mark.slow  # about 2 CPU s (two quadratures and the kernel's series)
@pytest.mark.parametrize("alpha", [F(8), F(21, 4)])
def test_poisson_sampled_gaussian_encloses_the_quadrature(alpha):
    with mp.workdps(50):
        ref = ref_poisson(_mp(alpha), mp.mpf(1) / 100, mp.mpf(11) / 10)
    _inside("PoissonSampledDpEvent", {"sampling_probability": F(1, 100), "noise_multiplier": F(11, 10)}, alpha, "add-remove", ref, F(1, 10**30))


def test_pure_epsilons_are_the_published_ones():
    with working_precision(200):
        assert bounds(events.pure_of("LaplaceDpEvent", {"noise_multiplier": F(4)}, "add-remove")) == (F(1, 4), F(1, 4))
        lo, hi = bounds(events.pure_of("RandomizedResponseDpEvent", {"noise_parameter": F(1, 2), "num_buckets": F(4)}, "replace-one"))
        r = F(mp.nstr(mp.log(5), 50))  # a = 1/2 + 1/8, b = 1/8: log 5
        assert lo - F(1, 10**48) <= r <= hi + F(1, 10**48) and hi - lo < F(1, 10**55)
        assert events.pure_of("GaussianDpEvent", {"noise_multiplier": F(1)}, "add-remove") is None


# --------------------------------------------------------------------------------------------
# Genuine certificates and forgeries
# --------------------------------------------------------------------------------------------
def E(cls, **fields):
    return {"class_name": cls, **fields}


LEDGERS = {
    "mixed": E(
        "ComposedDpEvent",
        events=[
            E(
                "SelfComposedDpEvent",
                count=1000,
                event=E("PoissonSampledDpEvent", sampling_probability="1/100", event=E("GaussianDpEvent", noise_multiplier="11/10")),
            ),
            E("LaplaceDpEvent", noise_multiplier="2"),
            E("GaussianDpEvent", noise_multiplier=3.0),
        ],
    ),
    "finite": E(
        "ComposedDpEvent",
        events=[
            E("ZCDpEvent", rho="1/100"),
            E("EpsilonDeltaDpEvent", epsilon="1/2", delta="1e-7"),
            E("SelfComposedDpEvent", count=3, event=E("RandomizedResponseDpEvent", noise_parameter="1/2", num_buckets=4)),
        ],
    ),
    "pure": E(
        "ComposedDpEvent", events=[E("LaplaceDpEvent", noise_multiplier="10"), E("RandomizedResponseDpEvent", noise_parameter="1/2", num_buckets=4)]
    ),
    "more": E(  # the five classes added on 2026-12-02 (more in tests/test_kernel_events_more.py)
        "ComposedDpEvent",
        events=[
            E("SelfComposedDpEvent", count=4, event=E("DiscreteGaussianDpEvent", sigma="3/2", sensitivity=2)),
            E("SingleEpochTreeAggregationDpEvent", noise_multiplier="2", step_counts=[5, 3, 9]),
            E("ExponentialMechanismDpEvent", epsilon="1/2"),
            E("PermuteAndFlipDpEvent", epsilon="1/4"),
            E("DiscreteLaplaceDpEvent", noise_parameter="1/2", sensitivity=3),
        ],
    ),
    "more-pure": E(
        "ComposedDpEvent",
        events=[
            E("ExponentialMechanismDpEvent", epsilon="1/3"),
            E("SelfComposedDpEvent", count=2, event=E("PermuteAndFlipDpEvent", epsilon="1/4")),
            E("DiscreteLaplaceDpEvent", noise_parameter="1/5", sensitivity=2),
        ],
    ),
}
QUERIES = [
    ("mixed", "add-remove", {"delta": "1e-5"}),
    ("mixed", "add-remove", {"epsilon": "1"}),
    ("mixed", "replace-special", {"order": "8"}),
    ("finite", "replace-one", {"delta": "1e-5"}),
    ("finite", "replace-special", {"epsilon": "2"}),
    ("pure", "replace-one", {"delta": "0"}),
    ("pure", "replace-special", {"order": "5/2"}),
    ("more", "replace-special", {"delta": "1e-5"}),
    ("more", "replace-special", {"epsilon": "3"}),
    ("more", "replace-special", {"order": "7/2"}),
    ("more-pure", "replace-one", {"delta": "0"}),
    ("more-pure", "add-remove", {"epsilon": "1/2"}),
]


def make(name, relation, query) -> dict:
    from certify.events.accountant import certify_events
    from certify.events.ledger import ledger_of

    return json.loads(certify_events(ledger_of(LEDGERS[name], relation), **query).dumps())


@pytest.mark.slow  # about 4 CPU s (twelve ledgers, both checkers; one Poisson-sampled series at a fractional order)
def test_genuine_ledgers_accepted_by_both():
    seen = set()
    for name, relation, query in QUERIES + [("registered example", None, None)]:
        doc = make(name, relation, query) if relation else _example()
        v = certify_kernel.check_document(copy.deepcopy(doc))
        assert certify_verdict(doc) == 0 and v.status == 0, (name, relation, query, v.message)
        seen |= {v for k, v in doc["inputs"].items() if k.endswith(".class")}
    assert seen == set(events.MECHANISMS)


def _example():
    from test_forger19 import genuine

    return genuine(events.KIND)


def test_uncovered_mechanisms_are_cannot_decide():
    from certify.events.accountant import certify_events
    from certify.events.ledger import ledger_of

    swor = E("SampledWithoutReplacementDpEvent", source_dataset_size=1000, sample_size=10, event=E("GaussianDpEvent", noise_multiplier="2"))
    for e in (swor, E("RepeatAndSelectDpEvent", event=E("GaussianDpEvent", noise_multiplier="5"), mean="3", shape="1")):
        doc = json.loads(certify_events(ledger_of(e, "replace-one" if e is swor else "add-remove"), delta="1e-6").dumps())
        v = certify_kernel.check_document(doc)
        assert v.status == 3 and "not re-derived" in v.message, v.message


def _input_forgeries(doc):
    inputs = doc["inputs"]
    edits = [{"neighboring": "replace-one"}, {"neighboring": "add-remove"}, {"neighboring": "other"}]
    for key, value in inputs.items():
        if key.endswith((".noise_multiplier", ".epsilon", ".rho", ".noise_parameter", ".sampling_probability", ".sigma", ".sensitivity")):
            edits += [{key: "1/1000"}, {key: "0"}, {key: str(F(value) * 2)}]
        elif key.endswith(".step_counts"):
            edits += [{key: "16," + value}, {key: "-1"}, {key: "1/2"}, {key: ""}]
        elif key.endswith(".count"):
            edits += [{key: "0"}, {key: str(int(value) + 1)}]
        elif key.endswith(".num_buckets"):
            edits += [{key: "1"}, {key: "1/2"}]
        elif key.endswith(".delta") or key in ("target_delta", "target_epsilon", "order"):
            edits += [{key: "0"}, {key: "1"}, {key: str(F(value) / 2)}]
    edits.append({"event[0].class": "DiscreteLaplaceDpEvent"})
    edits.append({"event[0].class": "SampledWithoutReplacementDpEvent"})
    edits.append({"event[9].class": "GaussianDpEvent"})
    for i, e in enumerate(edits):
        d = copy.deepcopy(doc)
        d["inputs"].update(e)
        yield f"inputs {e}", reseal(d)
        if i % 4:  # every fourth edit also regenerated consistently (each costs a full evaluation by both checkers)
            continue
        try:
            yield f"regenerated at {e}", regenerate(doc, inputs=e)
        except Exception:  # noqa: BLE001 - certify refuses the edit: nothing consistent to forge
            pass


def _witness_forgeries(doc):
    w = doc["witnesses"]
    bound = F(w["bound"])
    for b in (bound * F(9, 10), bound - bound / 10**9, bound + bound / 10**8):
        d = copy.deepcopy(doc)
        text = f"{float(b):.9e}".replace("e+0", "e").replace("e-0", "e-").replace("e+", "e")
        for c in d["claims"] + d["conclusions"]:
            for k in ("statement", "rhs"):
                if k in c:
                    c[k] = c[k].replace(w["bound"], text)
        d["witnesses"]["bound"] = text
        yield f"bound {text}", reseal(d)
    if "alpha" in w:
        for a in ("2", "3/2", "1", "5000"):
            try:
                yield f"alpha regenerated {a}", regenerate(doc, witnesses=lambda x, a=a: x.update(alpha=a))
            except Exception:  # noqa: BLE001
                pass


def _agree(label, d):
    c, k = certify_verdict(d), certify_kernel.check_document(copy.deepcopy(d))
    if c == 4 and k.status == 0:  # a designed difference: a respelling, or a ball edit that stays true
        assert _only_canonical_problems(d) or any(label.endswith(": " + e) for e in TRUE_BUT_NOT_REPRODUCED), (label, k.message)
        return
    if k.status == 3:  # the kernel never claims the opposite: cannot decide only where certify refuses too, or on its own limits
        assert c != 0 or "not re-derived" in k.message, (label, c, k.message)
        return
    assert (c == 0) == (k.status == 0) and (k.status in (0, 4, 5) or k.status == 2 and c == 2), (label, c, k.status, k.message)


@pytest.mark.slow  # about 50 CPU s in all (about 650 forgeries of seven ledgers, both checkers)
@pytest.mark.parametrize("case", range(len(QUERIES)))
def test_forgeries_refused_by_both(case):
    doc = make(*QUERIES[case])
    n = 0
    names = {"rdp[0]", "epsilon[0]", "rdp", "epsilon", "delta", "extra_delta"}  # every kind of quantity, not every entry's
    for label, d in [*edits_of(doc, names), *_input_forgeries(doc), *_witness_forgeries(doc)]:
        _agree(label, d)
        n += 1
    assert n > 60


# --------------------------------------------------------------------------------------------
# events/rdp-fails (the failing side of a calibration)
# --------------------------------------------------------------------------------------------
FAMILIES = {
    "laplace": E("SelfComposedDpEvent", count=10, event=E("LaplaceDpEvent", noise_multiplier="$noise")),
    "poisson": E(
        "SelfComposedDpEvent",
        count=100,
        event=E("PoissonSampledDpEvent", sampling_probability="1/100", event=E("GaussianDpEvent", noise_multiplier="$noise")),
    ),
}


def calibrated(family: str, relation: str = "add-remove"):
    """(passing, failing) certificates of the calibration of a family at (1, 1e-5)."""
    from certify.accounting import calibrate_noise

    r = calibrate_noise(FAMILIES[family], "1", "1e-5", relation)
    return json.loads(r.passing.dumps()), json.loads(r.failing.dumps())


def _fails_forgeries(doc):
    yield from edits_of(doc, {"epsilon[2]", "epsilon[17]", "epsilon[4096]"})
    for e in ({"target_epsilon": "1/2"}, {"target_epsilon": "100"}, {"target_delta": "1/2"}, {"event[0].count": "1"}, {"order": "2"}):
        d = copy.deepcopy(doc)
        d["inputs"].update(e)
        yield f"inputs {e}", reseal(d)
    noise = [k for k in doc["inputs"] if k.endswith("noise_multiplier")][0]
    yield "regenerated at a larger noise (it passes)", regenerate(doc, inputs={noise: str(F(doc["inputs"][noise]) * 4)})
    d = copy.deepcopy(doc)  # a smaller grid named in the statement, its quantities and claims dropped to match
    d["conclusions"][0]["statement"] = d["conclusions"][0]["statement"].replace("integers 2..256", "integers 2..255")
    yield "grid without 256", reseal(d)


@pytest.mark.slow  # about 25 CPU s (two calibrations; the Poisson-sampled ledger's 270 orders up to 4096, both checkers)
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_calibration_certificates_and_forgeries(family):
    passing, failing = calibrated(family)
    assert failing["kind"] == "events/rdp-fails"
    for doc in (passing, failing):
        v = certify_kernel.check_document(copy.deepcopy(doc))
        assert certify_verdict(doc) == 0 and v.status == 0, (doc["kind"], v.message)
    forged = list(_fails_forgeries(failing))
    if family == "poisson":  # each re-derivation costs a few CPU s here: the edits of recorded numbers only (one derivation)
        forged = [(label, d) for label, d in forged if label.startswith("epsilon[")]
    for label, d in forged:
        _agree(label, d)


@pytest.mark.slow  # about 6 s (a fresh kernel process per file)
def test_command_line_and_verify_kernel_agree(tmp_path):
    """`python -m certify_kernel FILE` and `certify verify --kernel FILE` give the same kernel verdict on genuine and
    forged files of the new kinds (the default Rényi mode, events/rdp)."""
    import contextlib
    import io
    import subprocess

    from certify import cli

    genuine = make("finite", "replace-one", {"delta": "1e-5"})
    forged = copy.deepcopy(genuine)
    forged["inputs"]["event[0].rho"] = "1/1000"  # a weaker mechanism claimed: the recorded rdp[0] no longer holds
    from certify import api

    default = api.dpsgd_epsilon(sampling="poisson", adjacency="add-remove", sampling_rate="0.01", noise_multiplier="1.1", steps=1000, delta="1e-5")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for name, doc in (("genuine", genuine), ("forged", reseal(forged)), ("default", default.certificate.to_json())):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc))
        k = subprocess.run([sys.executable, "-m", "certify_kernel", str(path)], capture_output=True, text=True, env=env)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            cli.main(["verify", "--kernel", str(path)])
        line = [x for x in out.getvalue().splitlines() if x.strip().startswith("kernel:")][0]
        assert line.rstrip().endswith(f"(status {k.returncode})") and k.stdout.strip() in line, (name, line, k.stdout)
        assert k.returncode == (4 if name == "forged" else 0), k.stdout


def test_a_warm_memo_gives_the_verdict_of_a_cold_one():
    """The kernel's memo of derivations (certify_kernel._derive) is keyed by all a derivation reads: the head quantity's
    recorded ball sets the budget's width text, so a forged ball (radius halved, still around the true value) followed
    by a genuine check must meet the same refusal as on a cold start (it was accepted from the genuine's memo)."""
    from certify_kernel.numbers import dyadic, printed

    doc = make("finite", "replace-one", {"delta": "1e-5"})
    assert certify_kernel.check_document(copy.deepcopy(doc)).status == 0
    forged = copy.deepcopy(doc)
    q = forged["quantities"]["epsilon"]
    q["ball"]["rad"] = [str(int(q["ball"]["rad"][0]) // 2 or 1), q["ball"]["rad"][1]]
    mid, rad = dyadic(q["ball"]["mid"], "mid"), dyadic(q["ball"]["rad"], "rad")
    q["lower"], q["upper"] = printed(mid - rad, up=False), printed(mid + rad, up=True)
    forged["witnesses"]["bound"] = q["upper"]
    forged = reseal(forged)
    warm = certify_kernel.check_document(copy.deepcopy(forged))
    certify_kernel._MEMO.clear()
    cold = certify_kernel.check_document(copy.deepcopy(forged))
    assert warm == cold and cold.status == 4 and "budget" in cold.message, (warm, cold)
