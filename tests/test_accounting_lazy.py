"""certify.accounting.RdpAccountant answers without building the certificate (certify/events/accountant.py
``answer_events``, certify/events/certificates.py ``headline``) and builds it on first access of ``.certificate``.

References: the eager path, ``certify_events`` of the same ledger and query (the certificate the accountant wrote
with every answer before), its certified value rounded up and its canonical text; the order choice against the
two-stage choice written here from its definition (FIRST_STAGE's scores, then ORDER_GRID's within 1 or 10% of the
best), not through the one-grid shortcut under test. A mismatch of one bit of a float or one byte of a document
fails.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest

from certify.accounting import RdpAccountant
from certify.balls import InputError, float_above, fmpq
from certify.events import accountant as acc_mod
from certify.events.accountant import FIRST_STAGE, ORDER_GRID, answer_events, certified_value, certify_events, choose_order
from certify.events.ledger import ledger_of
from certify.verify import verify_text


def ev(cls: str, **fields) -> dict:
    return {"class_name": cls, **fields}


def self_composed(event: dict, count: int) -> dict:
    return ev("SelfComposedDpEvent", event=event, count=count)


def random_event(r: random.Random, relation: str, closed_only: bool = False) -> dict:
    """One event of a random class admissible under ``relation`` (floats as dp_accounting hands them over)."""
    kinds = ["gauss", "laplace", "zcdp"] + (["tree"] if relation == "replace-special" else [])
    if not closed_only:
        kinds += ["epsdelta", "exp", "dlaplace"] + (["rr"] if relation != "add-remove" else [])
        kinds += ["poisson"] if relation != "replace-one" and r.random() < 0.3 else []
    k = r.choice(kinds)
    x = r.choice([r.uniform(0.3, 3), 10 ** r.uniform(-2, 2), r.uniform(1, 60)])
    if k == "gauss":
        return ev("GaussianDpEvent", noise_multiplier=x)
    if k == "laplace":
        return ev("LaplaceDpEvent", noise_multiplier=x)
    if k == "zcdp":
        return ev("ZCDpEvent", rho=10 ** r.uniform(-6, 0.5), xi=r.choice([0.0, 0.0, r.uniform(0, 0.1)]))
    if k == "tree":
        return ev(
            "SingleEpochTreeAggregationDpEvent",
            noise_multiplier=x,
            step_counts=r.choice([r.randrange(1, 5000), [r.randrange(1, 99) for _ in range(3)]]),
        )
    if k == "epsdelta":
        return ev("EpsilonDeltaDpEvent", epsilon=r.uniform(0.01, 1), delta=r.choice([0.0, 1e-9, 1e-7]))
    if k == "exp":
        return ev("ExponentialMechanismDpEvent", epsilon=r.uniform(0.01, 1))
    if k == "dlaplace":
        return ev("DiscreteLaplaceDpEvent", noise_parameter=r.uniform(0.1, 2), sensitivity=r.randrange(1, 4))
    if k == "rr":
        return ev("RandomizedResponseDpEvent", noise_parameter=r.uniform(0.1, 0.9), num_buckets=r.randrange(2, 20))
    return ev("PoissonSampledDpEvent", sampling_probability=r.choice([0.001, 0.01]), event=ev("GaussianDpEvent", noise_multiplier=r.uniform(0.8, 3)))


def random_ledger(r: random.Random, closed_only: bool = False):
    relation = r.choice(["add-remove", "replace-one", "replace-special"])
    events = [
        self_composed(random_event(r, relation, closed_only), r.choice([1, 10, 100, 1000, r.randrange(1, 10**5)]))
        for _ in range(r.choice([1, 1, 2, 4]))
    ]
    return relation, ev("ComposedDpEvent", events=events)


def random_query(r: random.Random):
    """(method name, float argument) of one accountant query."""
    if r.random() < 0.65:
        return "get_epsilon", r.choice([1e-5, 1e-6, 1e-10, 0.3, 1e-300, r.uniform(1e-12, 0.9)])
    return "get_delta", r.choice([0.0, 0.5, 1.0, 8.0, 100.0, r.uniform(0, 20)])


def eager(relation: str, event: dict, method: str, value: float, orders=None):
    """The eager reference: (float, canonical text, alpha witness or None) of certify_events on the same query."""
    name, key = ("target_delta", "delta") if method == "get_epsilon" else ("target_epsilon", "epsilon")
    from certify.event_tree import from_library

    target, note = from_library(value, name, "the caller")
    notes = {f"{name}.note": note} if note else {}
    snapped = acc_mod.snap_orders(orders) if orders is not None else None
    cert = certify_events(ledger_of(event, relation), orders=snapped, notes=notes, **{key: target})
    return float_above(certified_value(cert)), cert.dumps(), cert.witnesses.get("alpha")


def test_lazy_answers_and_certificates_are_the_eager_ones_on_random_ledgers():
    r = random.Random(20261202)
    seen = {"get_epsilon": 0, "get_delta": 0}
    for _ in range(70):
        relation, event = random_ledger(r)
        orders = None if r.random() < 0.8 else sorted(r.sample([1.5, 2, 3, 4, 8, 16, 32, 64, 128, 256, 1.25, 10.5], 5))
        for _ in range(2):
            method, value = random_query(r)
            acc = RdpAccountant(orders=orders, neighboring_relation=relation).compose(event)
            try:
                want, text, alpha = eager(relation, event, method, value, orders)
            except InputError as err:  # the eager path refuses: so does the accountant, with the same message
                with pytest.raises(InputError) as got:
                    getattr(acc, method)(value)
                assert str(got.value) == str(err)
                continue
            got = getattr(acc, method)(value)
            assert got == want and type(got) is float
            assert acc._pending is not None  # the certificate is not built yet ...
            order = getattr(acc, f"{method}_and_optimal_order")(value)[1]  # ... nor for the order
            assert acc._pending is not None
            assert order == (0.0 if alpha is None else float(Fraction(alpha)))
            assert acc.certificate.dumps() == text  # ... and then byte for byte the eager document
            seen[method] += 1
    assert seen["get_epsilon"] >= 60 and seen["get_delta"] >= 30


def test_pure_queries_and_dp_accounting_events_are_lazy_too():
    import dp_accounting as dpa

    acc = RdpAccountant().compose(ev("LaplaceDpEvent", noise_multiplier=2.0), 10).compose(ev("ExponentialMechanismDpEvent", epsilon=0.25))
    want, text, alpha = eager(
        "add-remove",
        ev(
            "ComposedDpEvent", events=[self_composed(ev("LaplaceDpEvent", noise_multiplier=2.0), 10), ev("ExponentialMechanismDpEvent", epsilon=0.25)]
        ),
        "get_epsilon",
        0.0,
    )
    assert alpha is None and acc.get_epsilon(0.0) == want and acc.get_epsilon_and_optimal_order(0.0) == (want, 0.0)
    assert acc.certificate.dumps() == text
    event = dpa.SelfComposedDpEvent(dpa.ZCDpEvent(0.01), 100)
    ours = RdpAccountant().compose(event)
    want, text, _ = eager("add-remove", event, "get_epsilon", 1e-6)
    assert ours.get_epsilon(1e-6) == want and abs(want - 7.7662379035) < 1e-9  # (dp_accounting's estimate: 7.7662379035)
    assert ours.certificate.dumps() == text and verify_text(text).exit_code == 0


def test_certificate_is_built_once_on_first_access_and_each_answer_replaces_it(monkeypatch):
    import certify.accounting as accounting

    calls = []
    real = accounting.certify_events
    monkeypatch.setattr(accounting, "certify_events", lambda *a, **k: calls.append(k) or real(*a, **k))
    acc = RdpAccountant().compose(ev("GaussianDpEvent", noise_multiplier=1.1), 1000)
    eps = acc.get_epsilon(1e-5)
    assert calls == []  # the answer is given without a certificate
    first = acc.certificate
    assert len(calls) == 1 and acc.certificate is first and len(calls) == 1
    assert str(calls[0]["chosen"]).replace(" ", "") == first.witnesses["alpha"]  # built at the order of the answer
    assert float_above(certified_value(first)) == eps
    acc.get_delta(2.0)  # a new answer: its own certificate, built when asked for
    assert len(calls) == 1 and acc.certificate.inputs["target_epsilon"] == "2" and len(calls) == 2
    acc.certificate = None  # (assignable, as before)
    assert acc.certificate is None


def test_hypotheses_are_decided_before_the_answer():
    # (epsilon, delta) events whose own delta exceeds the target: refused by get_epsilon, not when the certificate is read
    acc = RdpAccountant().compose(ev("EpsilonDeltaDpEvent", epsilon=0.5, delta=1e-3), 10)
    with pytest.raises(InputError, match="is not above the"):
        acc.get_epsilon(1e-5)
    assert acc.certificate is None
    # their float delta rounds to 1 (1 - (1 - 0.01)^(10^5)): the float choice used to divide by zero; now the refusal
    acc = RdpAccountant().compose(ev("EpsilonDeltaDpEvent", epsilon=0.5, delta=0.01), 10**5)
    for delta in (0.5, 1e-5):
        with pytest.raises(InputError, match="is not above the"):
            acc.get_epsilon(delta)
    # NaN, infinities and out-of-range targets: refused before anything, as before
    acc = RdpAccountant().compose(ev("GaussianDpEvent", noise_multiplier=1.0))
    for bad in (math.nan, math.inf, 1.0, -1e-9):
        with pytest.raises(InputError):
            acc.get_epsilon(bad)
    with pytest.raises(InputError):
        acc.get_delta(-1.0)


def test_undecided_first_precision_builds_the_certificate_at_once(monkeypatch):
    import certify.accounting as accounting

    monkeypatch.setattr(accounting, "answer_events", lambda *a, **k: None)  # (as when 128 bits decide nothing)
    acc = RdpAccountant().compose(ev("LaplaceDpEvent", noise_multiplier=10.0), 100)
    want, text, alpha = eager("add-remove", self_composed(ev("LaplaceDpEvent", noise_multiplier=10.0), 100), "get_epsilon", 1e-6)
    assert acc.get_epsilon_and_optimal_order(1e-6) == (want, float(Fraction(alpha)))
    assert acc._pending is None and acc.certificate.dumps() == text


def test_answer_events_is_the_certificates_upper_endpoint():
    r = random.Random(7)
    for _ in range(25):
        relation, event = random_ledger(r, closed_only=True)
        ledger = ledger_of(event, relation)
        for key, target in (("delta", fmpq(1, 10**6)), ("epsilon", fmpq(r.randrange(1, 400), 10))):
            hi, alpha = answer_events(ledger, **{key: target})
            cert = certify_events(ledger, **{key: target})
            assert hi == certified_value(cert) and cert.witnesses["alpha"] == str(alpha).replace(" ", "")


def two_stage_choice(ledger, query, target):
    """The choice by its definition: the first least score on FIRST_STAGE, then on ORDER_GRID's orders within
    max(1, 10%) of it the first least, kept when strictly below (scores of certify.events.accountant._scores)."""
    first = acc_mod._scores(ledger, query, target, FIRST_STAGE, False)
    i = int(np.argmin(first))
    best, best_score = FIRST_STAGE.exact[i], float(first[i])
    b = FIRST_STAGE.floats[i]
    span = max(1.0, 0.1 * b)
    near = [j for j, a in enumerate(ORDER_GRID.floats) if b - span <= a <= b + span]
    if near:
        window = acc_mod.Orders([ORDER_GRID.exact[j] for j in near], [ORDER_GRID.floats[j] for j in near])
        fine = acc_mod._scores(ledger, query, target, window, True)
        j = int(np.argmin(fine))
        if float(fine[j]) < best_score:
            best = window.exact[j]
    return best


def test_closed_form_order_choice_is_the_two_stage_choice_on_hundreds_of_ledgers():
    r = random.Random(22)
    n = 0
    alphas = set()
    for k in range(150):
        relation, event = random_ledger(r, closed_only=True)
        if k % 3 == 0:  # little noise spent: optimal orders up to 256, where FIRST_STAGE is coarse and the window decides
            z = 10 ** r.uniform(0.5, 3)
            event = ev(
                "ComposedDpEvent", events=[self_composed(ev(r.choice(["GaussianDpEvent", "LaplaceDpEvent"]), noise_multiplier=z), r.randrange(1, 20))]
            )
        ledger = ledger_of(event, relation)
        assert all(type(m) in acc_mod.ELEMENTWISE for m, _ in ledger.entries)
        for _ in range(2):
            if r.random() < 0.6:
                query, target = "target_delta", fmpq(r.choice([1, 3, 7]), r.choice([10**5, 10**6, 10**9, 10, 2, 10**300, r.randrange(2, 10**12)]))
            else:
                query, target = "target_epsilon", fmpq(r.randrange(0, 10**6), r.choice([10**3, 10**5, 10, 1]))
            alpha = choose_order(ledger, query, target)
            assert alpha == two_stage_choice(ledger, query, target)
            alphas.add(alpha)
            n += 1
    assert n == 300 and len(alphas) > 80 and max(alphas) > 100 and min(alphas) < 2


# --------------------------------------------------------------------------------------------
# the answer path's shortcuts (issue 22: the RDP path no slower than dp_accounting's), each against its reference
# --------------------------------------------------------------------------------------------
def linear_ledger(r: random.Random):
    """A random ledger of alpha-linear mechanisms (Gaussian, ZCDp, tree aggregation), extremes included."""
    relation = r.choice(["add-remove", "replace-one", "replace-special"])
    kinds = ["GaussianDpEvent", "ZCDpEvent"] + (["SingleEpochTreeAggregationDpEvent"] if relation == "replace-special" else [])
    events = []
    for _ in range(r.choice([1, 1, 2, 3, 6])):
        kind = r.choice(kinds)
        z = r.choice([r.uniform(0.3, 3), 10 ** r.uniform(-3, 4), r.uniform(1, 60), 10 ** r.uniform(-160, 160)])
        if kind == "ZCDpEvent":
            e = ev(
                kind,
                rho=r.choice([10 ** r.uniform(-12, 3), 0.0, 10 ** r.uniform(-200, 25)]),
                xi=r.choice([0.0, 0.0, r.uniform(0, 0.1), 10 ** r.uniform(-5, 5)]),
            )
        elif kind == "GaussianDpEvent":
            e = ev(kind, noise_multiplier=z)
        else:
            e = ev(kind, noise_multiplier=z, step_counts=r.choice([r.randrange(1, 5000), [r.randrange(0, 99) for _ in range(3)], 10**18]))
        events.append(self_composed(e, r.choice([1, 10, 1000, r.randrange(1, 10**6), 10**18])))
    return relation, ev("ComposedDpEvent", events=events)


def linear_query(r: random.Random):
    if r.random() < 0.6:
        return "target_delta", fmpq(r.choice([1, 3, 7]), r.choice([10**5, 10**6, 10**9, 10, 2, 10**300, r.randrange(2, 10**12)]))
    return "target_epsilon", fmpq(r.randrange(0, 10**6), r.choice([10**3, 10**5, 10, 1, 10**9]))


def test_linear_scores_are_the_arrays_scores_bit_for_bit():
    """_linear_score at every order of ORDER_GRID is the float _raw_scores computes there (the same IEEE operations)."""
    r = random.Random(2212)
    K = acc_mod._grid_lists()[0]
    n = 0
    for _ in range(120):
        relation, event = linear_ledger(r)
        try:
            ledger = ledger_of(event, relation)
        except InputError:
            continue
        terms = [acc_mod._linear_term(m, c) for m, c in ledger.entries]
        if None in terms:
            continue
        for query, target in (linear_query(r), linear_query(r)):
            with np.errstate(all="ignore"):
                want = acc_mod._raw_scores(ledger, query, target, ORDER_GRID, False, np, finite=False)
            t = acc_mod._log_delta(ledger, target) if query == "target_delta" else acc_mod.float_of(target)
            got = [acc_mod._linear_score(terms, query, k, a, K, t) for k, a in enumerate(ORDER_GRID.floats)]
            same = [g == w or (math.isnan(g) and math.isnan(w)) for g, w in zip(got, want.tolist())]
            assert all(same), (ledger, query, target)
            n += 1
    assert n >= 150


def test_linear_choice_is_the_one_grid_choice_and_the_two_stage_choice():
    r = random.Random(1202)
    n = decided = 0
    for _ in range(260):
        relation, event = linear_ledger(r)
        try:
            ledger = ledger_of(event, relation)
        except InputError:
            continue
        for _ in range(2):
            query, target = linear_query(r)
            with np.errstate(all="ignore"):
                want = acc_mod._choose_on_one_grid(ledger, query, target, np)
            got = acc_mod._choose_linear(ledger, query, target)
            n += 1
            if got is not None:
                decided += 1
                assert got == want, (ledger, query, target)
                if n % 4 == 0:
                    assert got == two_stage_choice(ledger, query, target)
            assert choose_order(ledger, query, target) == want
    assert n >= 400 and decided >= 0.9 * n


def test_binary_float_notes_are_the_fraction_spelling():
    from certify.balls import exact_str
    from certify.provenance import binary_float_note

    r = random.Random(3)
    xs = [0.0, -0.0, 1.0, 0.1, 1e-6, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, -3.5, 2.0**60, 123456789.0]
    xs += [r.uniform(-1, 1) * 10 ** r.uniform(-320, 308) for _ in range(300)] + [np.float64(0.3)]
    for x in xs:
        f = Fraction(float(x))
        q = fmpq(f.numerator, f.denominator)
        want = f"binary float {x!r} from dp_accounting; exact binary value {exact_str(q)} used"
        assert binary_float_note(x, "dp_accounting") == (q, want)


def test_equal_mechanisms_hash_alike_and_merge_as_before():
    import dp_accounting as dpa

    a = ledger_of(dpa.GaussianDpEvent(1.1), "add-remove").entries[0][0]
    b = ledger_of(ev("GaussianDpEvent", noise_multiplier=1.1), "add-remove").entries[0][0]
    c = ledger_of(ev("GaussianDpEvent", noise_multiplier="2476979795053773/2251799813685248"), "add-remove").entries[0][0]
    d = ledger_of(ev("ZCDpEvent", rho="3", xi=0), "add-remove").entries[0][0]
    e = type(d)((("rho", fmpq(3)), ("xi", 0)), d.notes)  # an integer parameter as an int: equal, so hashed alike
    assert a == b and hash(a) == hash(b) and a != c and a.params == c.params and d == e and hash(d) == hash(e)
    event = ev(
        "ComposedDpEvent", events=[dpa.GaussianDpEvent(1.1), ev("GaussianDpEvent", noise_multiplier=1.1), self_composed(ev("ZCDpEvent", rho=0.5), 3)]
    )
    ledger = ledger_of(event, "add-remove")
    assert [c for _, c in ledger.entries] == [2, 3]


def test_texts_too_long_are_refused_by_the_answer_as_by_the_certificate():
    for event in (
        ev("ZCDpEvent", rho="1/" + "7" * 4100),
        ev("GaussianDpEvent", noise_multiplier="7/" + "3" * 4097),
        ev("SingleEpochTreeAggregationDpEvent", noise_multiplier=2.0, step_counts=[10**17] * 250),
    ):
        relation = "replace-special"
        ledger = ledger_of(event, relation)
        assert not acc_mod._texts_fit(ledger)
        with pytest.raises(InputError) as want:
            certify_events(ledger, delta=fmpq(1, 10**6))
        with pytest.raises(InputError) as got:
            RdpAccountant(neighboring_relation=relation).compose(event).get_epsilon(1e-6)
        assert "would record" in str(want.value) and str(got.value) == str(want.value)
    r = random.Random(9)
    for _ in range(60):  # whenever _texts_fit says so, every recorded text fits
        relation, event = random_ledger(r)
        try:
            ledger = ledger_of(event, relation)
        except InputError:
            continue
        if acc_mod._texts_fit(ledger):
            assert all(len(t) <= acc_mod.MAX_TEXT for t in acc_mod.ledger_inputs(ledger).values())


def test_lazy_answers_and_certificates_are_the_eager_ones_on_linear_and_mixed_ledgers():
    r = random.Random(2026)
    seen = 0
    for k in range(90):
        relation, event = linear_ledger(r)
        if k % 3 == 0:  # mixed: a closed-form or general event beside the alpha-linear ones
            extra = random_event(r, relation)
            event = ev("ComposedDpEvent", events=[*event["events"], self_composed(extra, r.choice([1, 7, 100]))])
        method, value = random_query(r)
        try:
            want, text, alpha = eager(relation, event, method, value)
        except InputError as err:
            with pytest.raises(InputError) as got:
                getattr(RdpAccountant(neighboring_relation=relation).compose(event), method)(value)
            assert str(got.value) == str(err)
            continue
        acc = RdpAccountant(neighboring_relation=relation).compose(event)
        got = getattr(acc, method)(value)
        assert got == want and type(got) is float
        assert acc._order() == (0.0 if alpha is None else float(Fraction(alpha)))
        assert acc.certificate.dumps() == text
        seen += 1
    assert seen >= 60


def test_float_notes_are_written_when_read_and_equal_their_text():
    import dp_accounting as dpa

    from certify.provenance import FloatNote, binary_float_note

    ((m, _),) = ledger_of(dpa.ZCDpEvent(0.01), "add-remove").entries
    notes = dict(m.notes)
    assert all(type(n) is FloatNote for n in notes.values())
    assert notes["rho"] == binary_float_note(0.01, "dp_accounting")[1] and notes["xi"] == binary_float_note(0.0, "dp_accounting")[1]
    texted = type(m)(m.params, tuple((k, str(n)) for k, n in m.notes))  # the same mechanism with its notes as text
    assert texted == m and m == texted and hash(texted) == hash(m)
    assert FloatNote(0.0, "dp_accounting") != FloatNote(-0.0, "dp_accounting") and FloatNote(0.5, "Opacus") != FloatNote(0.5, "dp_accounting")
    assert hash(FloatNote(0.25, "dp_accounting")) == hash(binary_float_note(0.25, "dp_accounting")[1])
    inputs = acc_mod.ledger_inputs(ledger_of(dpa.ZCDpEvent(0.01), "add-remove"))
    assert all(type(t) is str for t in inputs.values()) and inputs["event[0].rho.note"] == notes["rho"]
    worst = (
        FloatNote(-5e-324, "dp_accounting"),
        FloatNote(-1.7976931348623157e308, "dp_accounting"),
        FloatNote(-(2.0**-1022) * (1 - 2**-52), "dp_accounting"),
    )
    assert max(len(str(n)) for n in worst) <= FloatNote.MAX_LENGTH
