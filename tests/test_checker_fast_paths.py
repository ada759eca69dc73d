"""The checker's fast paths give the answers of the slow ones they replace.

* :func:`certify.certificate.dumps_document` writes a plain document itself: the same characters as
  ``json.dumps(doc, indent=2, ensure_ascii=True) + "\\n"`` (the reference here is the standard library), and
  anything that is not plain JSON (floats, subclasses, non-string keys, deep nesting, cycles) is left to it;
* :func:`certify.certificate.check_spelling` asks ``exact()`` only of a text opening with a sign, a digit or a point:
  no text opening otherwise is a number to ``exact()``;
* the parsed inputs and ledger of ``events/rdp`` are memoised by the exact inputs: a forged certificate checked right
  after the genuine one it was made from is refused as when checked alone, and a refused input stays refused;
* the registry's kind map follows a changed ``ENTRIES``.
"""

from __future__ import annotations

import json
import random
import string

import pytest

from certify import registry
from certify.balls import InputError, exact
from certify.certificate import _NUMBER_START, check_spelling, digest_of, dumps_document
from certify.events import certificates as event_certificates
from certify.events.accountant import certify_events
from certify.events.ledger import ledger_from_inputs, ledger_of
from certify.verify import verify_text


def _reference(doc) -> str:
    return json.dumps(doc, indent=2, sort_keys=False, ensure_ascii=True) + "\n"


def _document(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 6 else 5)
    if kind == 0:
        return rng.choice(["", 'a"b', "\u00e9\u2028\x00\x7f\U0001f600", "plain text", "\\n", "\t</script>"])
    if kind == 1:
        return rng.randrange(-(10**40), 10**40)
    if kind == 2:
        return rng.choice([True, False, None])
    if kind == 3:
        return rng.choice([1.5, -0.0, 1e300])
    if kind == 4:
        return rng.randrange(3)
    if kind in (5, 6):
        return {rng.choice(["k", "\u00e9", "1", "a b", "", '"'] + [str(i)]) + str(i): _document(rng, depth + 1) for i in range(rng.randrange(4))}
    return [_document(rng, depth + 1) for _ in range(rng.randrange(4))]


def _both(doc):
    out = []
    for f in (_reference, dumps_document):
        try:
            out.append(f(doc))
        except (TypeError, ValueError, RecursionError) as err:
            out.append(type(err).__name__)
    return out


def test_the_writer_is_json_dumps_on_random_documents():
    rng = random.Random(20261202)
    for _ in range(3000):
        doc = _document(rng)
        ref, ours = _both(doc)
        assert ours == ref, doc


class _Str(str):
    pass


class _Int(int):
    def __repr__(self):
        return "forty-two"


@pytest.mark.parametrize(
    "doc",
    [
        {1: "a"},
        {None: 1, True: 2},
        {"a": float("nan")},
        {"a": (1, 2)},
        {"a": _Str("x")},
        {_Str("k"): 1},
        {"a": _Int(42)},
        {"a": {"b": []}, "c": {}},
        [],
        "text",
        7,
    ],
)
def test_what_is_not_plain_json_is_written_by_json_dumps(doc):
    ref, ours = _both(doc)
    assert ours == ref


def test_deep_nesting_and_cycles_as_json_dumps():
    deep: list = []
    x = deep
    for _ in range(300):
        x.append([])
        x = x[0]
    assert dumps_document(deep) == _reference(deep)
    cycle: dict = {}
    cycle["a"] = cycle
    assert _both(cycle) == ["ValueError", "ValueError"]


def test_a_genuine_certificate_is_written_as_json_dumps_writes_it():
    cert = certify_events(ledger_of({"class_name": "LaplaceDpEvent", "noise_multiplier": "10"}, "add-remove"), delta="1e-6")
    assert cert.dumps() == _reference(cert.to_json())


@pytest.mark.parametrize("seed", range(4))
def test_no_text_exact_reads_opens_otherwise(seed):
    rng = random.Random(seed)
    alphabet = string.digits + "+-./eE " + "abx"
    for _ in range(4000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 8))).strip(" ")
        if not text:
            continue
        try:
            exact(text, "t")
        except InputError:
            continue
        assert text[0] in _NUMBER_START, text


@pytest.mark.parametrize("text", ["1.0", "+1", "-0", ".5", "01", "2/4", "1E3", "1e+3", "-.5/2"])
def test_a_number_not_spelt_canonically_is_still_refused(text):
    assert check_spelling({"x": text}, "inputs", decimals=False) is not None


def _genuine() -> str:
    ledger = ledger_of({"class_name": "SelfComposedDpEvent", "count": 100, "event": {"class_name": "ZCDpEvent", "rho": "1/100"}}, "add-remove")
    return certify_events(ledger, delta="1e-6").dumps()


def _reseal(doc: dict) -> str:
    doc["digest"] = digest_of(doc)
    return dumps_document(doc)


def test_a_forgery_checked_after_its_genuine_file_is_refused():
    text = _genuine()
    assert verify_text(text).exit_code == 0
    doc = json.loads(text)
    doc["inputs"]["event[0].count"] = "10"  # the same ledger but for its count: a smaller claimed epsilon's inputs
    forged = _reseal(doc)
    assert verify_text(text).exit_code == 0
    assert verify_text(forged).exit_code == 4
    doc = json.loads(text)
    doc["witnesses"]["bound"] = "1e0"
    assert verify_text(_reseal(doc)).exit_code in (4, 5)
    assert verify_text(text).exit_code == 0


def test_a_refused_input_stays_refused():
    inputs = json.loads(_genuine())["inputs"]
    bad = dict(inputs, **{"event[0].rho": "-1"})
    for _ in range(2):
        with pytest.raises(InputError):
            ledger_from_inputs(bad)
        with pytest.raises(InputError):
            event_certificates.parse_inputs(bad)
    assert ledger_from_inputs(inputs) is ledger_from_inputs(dict(inputs))  # memoised by the texts, not the dict


def test_the_kind_map_follows_the_entries(monkeypatch):
    before = registry.kind_modules()
    assert before["events/rdp"] == "certify.events.certificates"
    monkeypatch.setattr(registry, "ENTRIES", tuple(e for e in registry.ENTRIES if e != "certify.events"))
    assert "events/rdp" not in registry.kind_modules()
    monkeypatch.undo()
    assert registry.kind_modules() == before
    registry.kind_modules()["x"] = "y"  # a copy: the memo is not the caller's to edit
    assert "x" not in registry.kind_modules()


def _rationals(rng: random.Random, n: int):
    for _ in range(n):
        kind = rng.randrange(4)
        if kind == 0:
            yield rng.randrange(-(10 ** rng.randrange(1, 40)), 10 ** rng.randrange(1, 40)), rng.randrange(1, 10 ** rng.randrange(1, 40))
        elif kind == 1:  # powers of ten and their neighbours: the carries and the exact cases
            yield rng.choice([-1, 1]) * 10 ** rng.randrange(0, 60) * rng.choice([1, 2, 5, 9, 99999, 10**10 - 1]), 10 ** rng.randrange(0, 60)
        elif kind == 2:  # dyadics, as Arb's endpoints are
            yield rng.randrange(-(2**200), 2**200), 2 ** rng.randrange(0, 600)
        else:
            yield rng.choice([-1, 1]) * (10 ** rng.randrange(1, 15) - rng.randrange(0, 3)), rng.choice([1, 3, 7, 10 ** rng.randrange(0, 20)])


def test_short_rationals_round_as_the_rational_path_rounds():
    from certify.balls import _round_fmpq, _round_short, fmpq

    rng = random.Random(7)
    for p, d in _rationals(rng, 4000):
        q = fmpq(p, d)
        for digits in (1, 3, 10):
            for up in (True, False):
                assert _round_short(int(q.p), int(q.q), digits, up) == _round_fmpq(q, digits, up), (p, d, digits, up)


@pytest.mark.parametrize(
    ("q", "up", "want"),
    [
        ("1", True, "1.000000000e0"),
        ("-1/3", True, "-3.333333333e-1"),
        ("-1/3", False, "-3.333333334e-1"),
        ("999999999999/1000", True, "1.000000000e9"),
    ],
)
def test_rounding_by_hand(q, up, want):
    from certify.balls import _round_decimal

    assert _round_decimal(exact(q), 10, up) == want


def _closed_form_ledger(rng: random.Random):
    events = []
    for _ in range(rng.randrange(1, 4)):
        k = rng.randrange(4)
        if k == 0:
            events.append({"class_name": "GaussianDpEvent", "noise_multiplier": f"{rng.randrange(1, 10**4)}/{rng.randrange(1, 10**3)}"})
        elif k == 1:
            events.append({"class_name": "LaplaceDpEvent", "noise_multiplier": f"{rng.randrange(1, 10**4)}/{rng.randrange(1, 10**3)}"})
        elif k == 2:
            events.append(
                {"class_name": "ZCDpEvent", "rho": f"{rng.randrange(1, 10**3)}/{rng.randrange(1, 10**5)}", "xi": rng.choice(["0", "1/100"])}
            )
        else:
            steps = [rng.randrange(1, 5000) for _ in range(rng.randrange(1, 4))]
            events.append(
                {
                    "class_name": "SingleEpochTreeAggregationDpEvent",
                    "noise_multiplier": f"{rng.randrange(1, 10**4)}/{rng.randrange(1, 10**3)}",
                    "step_counts": steps,
                }
            )
        events[-1] = {"class_name": "SelfComposedDpEvent", "count": rng.choice([1, 10, 1000, 10**6]), "event": events[-1]}
    return {"class_name": "ComposedDpEvent", "events": events}


@pytest.mark.parametrize("query", ["target_delta", "target_epsilon"])
def test_the_one_grid_choice_is_the_two_stage_choice(query, monkeypatch):
    """The closed forms' order is chosen from one evaluation on ORDER_GRID: the order of the two stages, always."""
    from certify.events import accountant

    rng = random.Random(11)
    cases = []
    for _ in range(150):
        relation = "replace-special"  # (tree aggregation's only relation; the others hold under every one)
        ledger = ledger_of(_closed_form_ledger(rng), relation)
        target = exact(rng.choice(["1e-5", "1e-9", "1/3"]) if query == "target_delta" else rng.choice(["1/10", "1", "8", "100"]))
        cases.append((ledger, target, accountant.choose_order(ledger, query, target)))
    monkeypatch.setattr(accountant, "ELEMENTWISE", frozenset())
    accountant._curve.cache_clear()
    for ledger, target, alpha in cases:
        assert accountant.choose_order(ledger, query, target) == alpha, ledger


@pytest.mark.parametrize("depth", [1, 63, 64, 65, 200])
@pytest.mark.parametrize("padding", ["", '"[[[{{{", '])
def test_the_depth_scan_at_its_bound(depth, padding):
    """A text with at most 64 opening brackets is not scanned (its nesting cannot exceed them); the verdict is the
    scan's: deeper than 64 is refused, whatever brackets sit in strings."""
    from certify.inputfile import MAX_DEPTH, json_depth_exceeds

    assert MAX_DEPTH == 64
    arrays = "[" + padding + "[" * (depth - 1) + "]" * depth
    objects = '{"a":' * depth + padding.rstrip(", ") + "1" * (not padding) + "}" * depth
    assert json_depth_exceeds(arrays) is (depth > 64)
    assert json_depth_exceeds(objects) is (depth > 64)
