"""The forger of session 21: canonical certificates (schema certify/3) attacked for every registered kind.

``certify verify`` must accept a file only if it is byte for byte the document certify itself writes from the same
inputs and witnesses, and must show a reader (statement, label, note, number, the CLI's lines) nothing the proof
does not say. A forger here edits a genuine certificate's inputs or witnesses, re-runs the registered evaluator
(``test_forger.regenerate``) and writes the result exactly as certify writes a document (:func:`forged_text`:
inputs in ``input_order``, witnesses with sorted keys, ``dumps_document``), so that the canonical byte comparison
cannot tell the forgery from a genuine file: only the question "would any certify producer ever write these
inputs and witnesses?" remains. Where the answer is no and ``certify verify`` still accepts (exit 0 or 6), the case
is a finding: it is marked ``xfail(strict=True)`` with the reason, and passes once the checker refuses it.

1. Forged inputs and witnesses, per kind: reported bounds spelt with a digit count certify never writes, or looser
   than the one it writes; integers recorded as text and the reverse; optional witness keys dropped; free labels
   (``budget.stopped_by``); Theorem C.13 failure runs split (certify merges them); search brackets wider than any
   search leaves; recorded precisions off the producers' ladder; provenance notes naming a library that the
   recorded ``source`` cannot have handed over; branch-and-bound witness lists re-ordered or duplicated. Spellings
   that are refused (Unicode lookalikes, escapes, ``-0``, ``1.0e0``, non-lowest fractions, keys unsorted at
   depth, JSON types) are kept as regression cases.
2. Every genuine certificate of every kind verifies at 1x, 2x and 4x its recorded precision, through the file's
   text (the canonical comparison included); the CLI output of a forged file shows no "HOLDS", escapes control
   characters and ends with the verdict on stdout.
3. Hostile files against ``verify`` and ``report`` (FIFO, devices, directories, size, JSON depth 64/65): one
   stderr line, exit 2, nothing written.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import subprocess
import sys
from fractions import Fraction

import pytest

from certify import cli
from certify.balls import InputError
from certify.certificate import MAX_BYTES, dumps_document, input_order, sorted_witnesses
from certify.verify import registered_kinds, spec_for, verify_text

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_forger import regenerate, reseal  # noqa: E402  (the forger's tools, written once)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = registered_kinds()
_TEXTS: dict[str, str] = {}


# --------------------------------------------------------------------------------------------
# The forger's tools: genuine documents, forgeries written exactly as certify writes documents
# --------------------------------------------------------------------------------------------
def genuine_text(kind: str) -> str:
    """The kind's registered example, as the bytes certify writes (made once per kind)."""
    if kind not in _TEXTS:
        _TEXTS[kind] = spec_for(kind).example().dumps()
    return _TEXTS[kind]


def genuine(kind: str) -> dict:
    return json.loads(genuine_text(kind))


def canonical_text(doc: dict) -> str:
    """``doc`` written as certify writes a document: inputs in ``input_order``, witness keys sorted at every depth,
    top-level keys in the writer's order, digest re-sealed, ``dumps_document``."""
    d = copy.deepcopy(doc)
    d["inputs"] = {k: d["inputs"][k] for k in sorted(d["inputs"], key=input_order)}
    d["witnesses"] = sorted_witnesses(d["witnesses"])
    reseal(d)
    order = ("schema", "kind", "precision", "inputs", "quantities", "claims", "conclusions", "witnesses", "budget", "digest", "software")
    return dumps_document({k: d[k] for k in order})


def forged_text(kind: str, inputs: dict | None = None, witnesses=None, drop=(), precision: int | None = None) -> str:
    """A self-consistent forgery of ``kind``'s example: inputs updated (``drop``: removed), ``witnesses(w)`` edits the
    witnesses in place, the registered evaluator re-run at ``precision`` (default: the recorded one), written
    canonically. The forger's evaluator may refuse the edit: the InputError propagates (the case is then moot)."""
    doc = genuine(kind)
    if precision is not None:
        doc["precision"] = precision
    return canonical_text(regenerate(doc, inputs, witnesses, drop))


def verdict(text: str):
    """``certify verify``'s exit status for a file's text (2 for a refusal when read)."""
    try:
        return verify_text(text).exit_code
    except InputError:
        return 2


ACCEPTED = (0, 6)


def refused(text: str) -> bool:
    """The forged text is written canonically (so only the canonical comparison of meaning can refuse it), and
    ``certify verify`` does not accept it."""
    assert dumps_document(json.loads(text)) == text
    return verdict(text) not in ACCEPTED


def unforgeable_and_refused(kind: str, edit) -> bool:
    """The evaluator refuses the edited witnesses (the forger cannot regenerate them), and the edited genuine file,
    re-sealed and written canonically, is refused by ``certify verify``."""
    from certify.balls import InputError

    with pytest.raises(InputError):
        forged_text(kind, witnesses=edit)
    doc = genuine(kind)
    edit(doc["witnesses"])
    return refused(canonical_text(reseal(doc)))


def forged_and_refused(kind: str, inputs: dict | None = None, witnesses=None) -> bool:
    """The forgery is refused: the evaluator refuses the edit (the forger cannot regenerate the file; then the edited
    genuine file, re-sealed and written canonically, is refused by ``certify verify``), or the forger regenerates a
    self-consistent file, written canonically, that ``certify verify`` refuses."""
    try:
        text = forged_text(kind, inputs=inputs, witnesses=witnesses)
    except InputError:
        doc = genuine(kind)
        doc["inputs"].update(inputs or {})
        if witnesses is not None:
            witnesses(doc["witnesses"])
        text = canonical_text(reseal(doc))
    return refused(text)


def inputs_unforgeable_and_refused(kind: str, inputs: dict) -> bool:
    """The evaluator refuses the edited inputs, and the edited genuine file, re-sealed, is refused."""
    from certify.balls import InputError

    with pytest.raises(InputError):
        forged_text(kind, inputs=inputs)
    doc = genuine(kind)
    doc["inputs"].update(inputs)
    return refused(canonical_text(reseal(doc)))


def finding(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


def _set(path, value):
    def edit(w):
        o = w
        for p in path[:-1]:
            o = o[p]
        o[path[-1]] = value

    return edit


def _pop(*path):
    def edit(w):
        o = w
        for p in path[:-1]:
            o = o[p]
        o.pop(path[-1])

    return edit


def _phase0(edit):
    """Apply a branch-and-bound witness edit to phase 0 of a fixed-size schedule certificate."""
    return lambda w: edit(w["phases"][0])


# --------------------------------------------------------------------------------------------
# The tools are right: an unchanged forgery is the genuine file, byte for byte, for every kind
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_an_unedited_forgery_is_the_genuine_file(kind):
    text = genuine_text(kind)
    assert forged_text(kind) == text
    assert verdict(text) == 0


# --------------------------------------------------------------------------------------------
# 1. Forged witnesses and inputs that a producer never writes
# --------------------------------------------------------------------------------------------
# Reported bounds: certify writes upper_decimal(ball, 10) (reported_delta of Theorem 4.1: 3 digits), always with
# exactly that many significant digits, and never a fraction (a Poisson epsilon_bound is also written as
# exact_str of an audit claim or a calibration target: an integer or a fraction, so "2" is writable there but
# "2e0" is not). Each of these appears in a conclusion's statement.
REPORTED_SPELLINGS = [
    ("dpsgd/renyi-birrell", ("reported_epsilon",), "6.1966406910e2"),  # 11 significant digits
    ("dpsgd/renyi-birrell", ("reported_epsilon",), "7e2"),  # 1 significant digit
    ("dpsgd/renyi-wang", ("reported_epsilon",), "4.0212080920e0"),
    ("dpsgd/renyi-wang", ("reported_epsilon",), "5e0"),
    ("dpsgd/renyi-poisson", ("epsilon_bound",), "1.7252295600e0"),
    ("dpsgd/renyi-poisson", ("epsilon_bound",), "2e0"),
    ("dpsgd/renyi-bok", ("reported_epsilon",), "2.4366938040e0"),
    ("dpsgd/rho-bok", ("reported_rho",), "8.9364390770e-4"),
    ("dpsgd/rho-bok", ("reported_rho",), "9e-4"),
    ("objpert/theorem-4.1", ("reported_delta",), "5.170e-8"),  # 4 digits (certify writes 3)
    ("objpert/theorem-4.1", ("reported_delta",), "6e-8"),
    ("objpert/theorem-4.1", ("reported_delta",), "1/10000000"),  # a fraction: "(1, 1/10000000)-DP"
    ("referee/objpert-rdp", ("reported_delta",), "1.1152610880e-4"),
    ("referee/objpert-rdp", ("reported_delta",), "1/1000"),
]


@pytest.mark.parametrize("kind, path, value", REPORTED_SPELLINGS, ids=[f"{k}:{v}" for k, _, v in REPORTED_SPELLINGS])
def test_a_reported_bound_has_the_digits_certify_writes(kind, path, value):
    assert unforgeable_and_refused(kind, _set(path, value))


LOOSER_BY_ONE_ULP = [
    ("dpsgd/renyi-birrell", ("reported_epsilon",), "6.196640692e2"),
    ("dpsgd/renyi-wang", ("reported_epsilon",), "4.021208093e0"),
    ("dpsgd/renyi-poisson", ("epsilon_bound",), "1.725229561e0"),
    ("referee/objpert-rdp", ("reported_delta",), "1.115261089e-4"),
    ("objpert/theorem-4.1", ("reported_delta",), "5.18e-8"),
]


@pytest.mark.parametrize("kind, path, value", LOOSER_BY_ONE_ULP, ids=[k for k, _, _ in LOOSER_BY_ONE_ULP])
def test_a_reported_bound_is_the_one_certify_derives(kind, path, value):
    assert value != genuine(kind)["witnesses"][path[0]]
    assert unforgeable_and_refused(kind, _set(path, value))


INPUT_DECIMALS = [
    ("dpsgd/renyi-poisson", "delta", "1e-5"),
    ("dpsgd/renyi-poisson", "phase[0].steps", "1e3"),
    ("dpsgd/renyi-poisson", "phase[0].sampling_rate", "1e-2"),
    ("objpert/theorem-4.1", "mu", "1e-2"),
    ("pld/dpsgd", "grid", "1e-2"),
    ("referee/objpert-rdp", "delta", "1e-6"),
]


@pytest.mark.parametrize("kind, key, value", INPUT_DECIMALS, ids=[f"{k}:{n}={v}" for k, n, v in INPUT_DECIMALS])
def test_an_input_is_spelt_as_certify_records_inputs(kind, key, value):
    assert refused(forged_text(kind, inputs={key: value}))


def _values(cases):
    """The argument tuples of parametrize cases (a ``pytest.param`` gives its values; its own id is used)."""
    return [getattr(c, "values", c) for c in cases]


# Integers: a witness certify writes as a JSON integer is accepted as text, and the reverse.
TYPE_SWAPS = [
    ("dpsgd/renyi-birrell", ("alpha",), "8"),  # certify writes 8
    ("dpsgd/renyi-wang", ("alpha",), "7"),
    ("objpert/theorem-4.1", ("iterations",), "1500"),
    ("objpert/theorem-4.1", ("theorem_C13", "first_passing_iterations"), "519"),
    ("objpert/calibration-4.13", ("threshold7_ceiling",), "467"),
    ("objpert/calibration-C13", ("theorem_C13", "failures", 0, "from"), "1"),
    ("dpsgd/rho-bok", ("u_lower",), 0),  # certify writes "0"
    ("dpsgd/rho-bok", ("points", 0, "strip"), 5),  # certify writes "5"
    ("dpsgd/rho-bok", ("budget", "max_evaluations"), 2000),  # certify writes "2000"
    ("dpsgd/rho-bok", ("curvature", 0, "thetas", 0), "13668744666"),  # certify writes a JSON integer
    ("dpsgd/rho-bok", ("stopped_early",), 0),  # certify writes false
    ("dpsgd/renyi-bok-schedule", ("alpha",), 8),  # certify writes "8"
    ("objpert/calibration-4.13", ("iterations",), "467"),
    ("objpert/calibration-C13", ("theorem_C13", "failures", 0, "to"), "1"),
]


# Fixed (issue 21): check_spelling admits both a JSON integer and its canonical text wherever the evaluator reads
#  either: certify writes one type per witness field, so the other is a file certify never writes (fix: each witness
#  field has one type, checked by the kind's witness reader)
@pytest.mark.parametrize("kind, path, value", TYPE_SWAPS, ids=[f"{k}:{'.'.join(map(str, p))}" for k, p, _ in _values(TYPE_SWAPS)])
def test_a_witness_number_has_the_json_type_certify_writes(kind, path, value):
    assert forged_and_refused(kind, witnesses=_set(path, value))


DROPPED_KEYS = [
    ("objpert/theorem-4.1", ("theorem_C13", "radii")),
    ("objpert/calibration-C13", ("theorem_C13", "radii")),
    ("dpsgd/rho-bok", ("budget",)),
    ("dpsgd/rho-bok", ("stopped_early",)),
    ("dpsgd/rho-bok", ("budget", "stopped_by")),
    ("pld/dpsgd", ("layouts", "max", "bands")),
    ("objpert/theorem-4.1", ("iterations_rule",)),
    ("referee/objpert-rdp", ("epsilon_lower",)),
    ("dpsgd/renyi-bok-schedule", ("phases", 0, "budget")),
    ("dpsgd/renyi-bok-schedule", ("phases", 1, "curvature")),
]


# Fixed (issue 21): a witness key that every producer writes may be left out (the evaluator reads a default:
#  w.get('radii', C13_RADII), w.get('stopped_early', False), budget optional, bands optional): the file is not what
#  certify writes
@pytest.mark.parametrize("kind, path", DROPPED_KEYS, ids=[f"{k}:{'.'.join(map(str, p))}" for k, p in _values(DROPPED_KEYS)])
def test_a_witness_key_certify_always_writes_cannot_be_dropped(kind, path):
    assert str(path[-1]) in json.dumps(genuine(kind)["witnesses"]) or isinstance(path[-1], int)
    assert forged_and_refused(kind, witnesses=_pop(*path))


# --------------------------------------------------------------------------------------------
# PLD one-step layouts: a choice made with floats, re-derived by the checker with the producer's own plan function
# --------------------------------------------------------------------------------------------
#: a graded events/pld ledger (the registered example's graded layout is degenerate: its bands coincide)
_GRADED_LEDGER = {"class_name": "SelfComposedDpEvent", "count": 50, "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "5"}}


def graded_text(kind: str) -> str:
    """A genuine certificate whose layout has four graded bands: ``pld/dpsgd``'s example, a Gaussian x 50 ledger."""
    key = f"graded {kind}"
    if key not in _TEXTS:
        if kind == "pld/dpsgd":
            _TEXTS[key] = genuine_text(kind)
        else:
            from certify.events.ledger import ledger_of
            from certify.events.pld_certificates import certify_events_pld

            _TEXTS[key] = certify_events_pld(ledger_of(_GRADED_LEDGER, "add-remove"), delta="1e-6", grid="1e-2").dumps()
    return _TEXTS[key]


GRADED_LAYOUT = {"pld/dpsgd": "max", "events/pld": "gaussian/remove"}  # the folded Gaussian entry (certify.pld.ledger.fold_gaussians)


def _band(i: int, end: int, by: int):
    def edit(lay):
        lay["bands"][i][end] += by

    return edit


def _shift(**by):
    def edit(lay):
        for k, d in by.items():
            lay[k] += d

    return edit


LAYOUT_EDITS = {
    "bands dropped": lambda lay: lay.pop("bands"),
    "last band dropped": lambda lay: lay["bands"].pop(),
    "inner band moved out by one index": _band(0, 0, -1),
    "band moved in by one index": _band(1, 1, -1),
    "outer band moved by one index": _band(3, 0, -1),
    "band stride doubled": _band(2, 2, 8),
    "core moved by one index": _shift(core_lo=1),
    "core widened": _shift(core_lo=-1, core_hi=1),
    "window widened": _shift(lo=-1, hi=1),
    "window widened by a stride": _shift(lo=-8),
    "window narrowed": _shift(hi=-1),
}


@pytest.mark.parametrize("edit", LAYOUT_EDITS, ids=list(LAYOUT_EDITS))
@pytest.mark.parametrize("kind", ["pld/dpsgd", "events/pld"])
def test_a_pld_layout_is_the_one_certify_chooses(kind, edit):
    """Any layout is sound, but certify chooses one (``layout_of``): a graded layout with its bands dropped or moved,
    its core moved or its window widened is a file certify never writes. The checker re-derives the layout by calling
    the producer's plan function and refuses, naming ``witnesses.layouts``, before any ball arithmetic."""
    doc = json.loads(graded_text(kind))
    assert verdict(graded_text(kind)) == 0
    lay = doc["witnesses"]["layouts"][GRADED_LAYOUT[kind]]
    assert len(lay["bands"]) == 4
    LAYOUT_EDITS[edit](lay)
    with pytest.raises(InputError) as err:
        spec_for(kind).evaluator(doc["inputs"], doc["witnesses"])
    assert err.value.parameter == "witnesses.layouts" and "certify chooses" in err.value.message, err.value.message
    assert refused(canonical_text(reseal(doc)))


# Fixed (issue 21): budget.stopped_by is read as free text (str(b.get('stopped_by', ''))): certify writes '',
#  'evaluations', 'seconds' or 'resolution', and `certify report` shows the witnesses as re-checked
@pytest.mark.parametrize("label", ["the moon", "RESOLUTION", "seconds"])
def test_the_search_stop_label_is_one_of_the_closed_set_and_agrees_with_the_search(label):
    # "seconds" is in the set but contradicts stopped_early = false (certify writes '' when the search met gamma)
    assert forged_and_refused("dpsgd/rho-bok", witnesses=_set(("budget", "stopped_by"), label))


def _next_decimal_up(text: str) -> str:
    """The next 12-digit decimal above ``text`` (one unit in its last digit): a key looser by one ulp."""
    mant, exp = text.split("e")
    digits = mant.replace(".", "")
    up = str(int(digits) + 1)
    assert len(up) == len(digits), "choose a key whose mantissa is not all nines"
    return f"{up[0]}.{up[1:]}e{exp}"


def _looser_key(leaf: int):
    def edit(w):
        w["leaves"][leaf][2] = _next_decimal_up(w["leaves"][leaf][2])

    return edit


LEAF_KEY_CASES = [
    ("dpsgd/rho-bok", _looser_key(0)),
    ("dpsgd/rho-bok", _looser_key(3)),
    ("dpsgd/renyi-bok", _looser_key(1)),
    ("dpsgd/renyi-bok-schedule", _phase0(_looser_key(0))),
    ("dpsgd/renyi-bok-schedule", lambda w: _looser_key(1)(w["phases"][1])),
]


# Fixed (issue 21): a recorded branch-and-bound leaf key was checked to be at least the recomputed key (keys move with
#  precision), so a key looser by one unit in its 12th digit verified. The recorded precision fixes the key (the same
#  code at the same precision gives the same balls): equal there, and <= at a higher --precision (where verify also
#  re-derives the file at the recorded precision)
@pytest.mark.parametrize("kind, edit", LEAF_KEY_CASES, ids=[f"{k}:{i}" for i, (k, _) in enumerate(LEAF_KEY_CASES)])
def test_a_leaf_key_is_the_one_certify_writes_at_the_recorded_precision(kind, edit):
    assert unforgeable_and_refused(kind, edit)
    doc = genuine(kind)
    edit(doc["witnesses"])
    text = canonical_text(reseal(doc))
    for p in (2, 4):  # verify --precision P above the recorded one: the tighter key is below the looser one, but the
        rep = verify_text(text, precision=p * doc["precision"])  # re-derivation at the recorded precision refuses it
        assert rep.exit_code not in ACCEPTED


@pytest.mark.parametrize("factor", [2, 4])
def test_genuine_leaf_keys_verify_above_the_recorded_precision(factor):
    """The control: the keys recomputed at 2x and 4x the recorded precision are tighter (<=) and the file verifies."""
    for kind in ("dpsgd/rho-bok", "dpsgd/renyi-bok-schedule"):
        text = genuine_text(kind)
        assert verify_text(text, precision=factor * json.loads(text)["precision"]).exit_code == 0


def _split_run(index: int, at: int):
    def edit(w):
        runs = w["theorem_C13"]["failures"]
        r = runs[index]
        assert r["from"] < at <= r["to"]
        runs[index : index + 1] = [dict(r, to=at - 1), dict(r, **{"from": at})]

    return edit


# Fixed (issue 21): Theorem C.13 failure runs split in two with the same reason are accepted: the producer merges
#  consecutive failures with one reason into one run (objpert/certificates.py), so a split run is never written
@pytest.mark.parametrize("kind", ["objpert/theorem-4.1", "objpert/calibration-C13"])
def test_c13_failure_runs_are_maximal(kind):
    assert forged_and_refused(kind, witnesses=_split_run(1, 50))


def test_c13_failure_runs_that_skip_or_reorder_are_refused():
    def reorder(w):
        runs = w["theorem_C13"]["failures"]
        runs[1], runs[2] = runs[2], runs[1]

    def relabel(w):
        w["theorem_C13"]["failures"][1]["reason"] = "eps < s_N"

    for edit in (reorder, relabel):
        assert forged_and_refused("objpert/calibration-C13", witnesses=edit)


BRACKETS = [
    ("objpert/calibration-C13", lambda w: w["sigma_bracket"].update({"pass": "9"})),
    ("referee/objpert-rdp", lambda w: w.update(epsilon_lower="1", epsilon_upper="3")),
    pytest.param("pld/dpsgd", lambda w: w.update(epsilon_lower="1/4", epsilon_upper="1"), id="pld/dpsgd"),
]


# Fixed (issue 21): a search bracket is free: any pass/fail (objpert sigma_bracket) or epsilon_lower/epsilon_upper
#  pair that the balls confirm is accepted and quoted in a conclusion ('sigma/G = 9 gives ...', 'lies in (1, 3]', '(1,
#  1/100000)-DP'); the producers write dyadic bisection ends at their tolerance. Fix: the evaluator checks the
#  bracket's form and width (or re-runs the fixed bisection, whose length the inputs decide)
@pytest.mark.parametrize("kind, edit", BRACKETS, ids=[k for k, _ in _values(BRACKETS)])
def test_a_search_bracket_is_one_a_search_leaves(kind, edit):
    assert forged_and_refused(kind, witnesses=edit)


CALIBRATED_INPUTS = [("bracket_iterations", "1000"), ("u", "53867723/9999999")]


# Fixed (issue 21): objpert/calibration-C13 records the corollary's N as bracket_iterations and its u (calibrate.py);
#  any other value that Theorem C.13 confirms is accepted (the statement then honestly says 'at N = 1000'), a file the
#  calibration never writes. Fix: the evaluator re-derives the corollary's N and u from the problem inputs
@pytest.mark.parametrize("key, value", CALIBRATED_INPUTS)
def test_calibrated_inputs_are_the_calibrations(key, value):
    assert forged_and_refused("objpert/calibration-C13", inputs={key: value})


OFF_LADDER = [
    ("dpsgd/renyi-poisson", 53),
    ("dpsgd/renyi-poisson", 129),
    ("objpert/theorem-4.1", 100),
    ("pld/dpsgd", 128),
    ("referee/objpert-rdp", 192),
]


@pytest.mark.parametrize("kind, precision", OFF_LADDER, ids=[f"{k}@{p}" for k, p in OFF_LADDER])
def test_the_recorded_precision_is_one_a_producer_writes(kind, precision):
    assert genuine(kind)["precision"] != precision
    assert refused(forged_text(kind, precision=precision))


_X = Fraction(1.1)
_X_TEXT = f"{_X.numerator}/{_X.denominator}"
NOTE_SOURCE = [
    ("schedule", "Opacus"),  # a schedule file keeps decimal text exactly: no binary float, no note
    ("command line", "Opacus"),
    ("calibration", "dp_accounting"),
    ("Opacus history", "dp_accounting"),
    ("dp_accounting event", "Opacus"),
]


@pytest.mark.parametrize("source, library", NOTE_SOURCE)
def test_a_note_names_the_library_its_source_hands_over(source, library):
    note = f"binary float 1.1 from {library}; exact binary value {_X_TEXT} used"
    inputs = {"source": source, "phase[0].noise_multiplier": _X_TEXT, "phase[0].noise_multiplier.note": note}
    assert inputs_unforgeable_and_refused("dpsgd/renyi-poisson", inputs)


def test_a_note_matching_its_source_verifies():
    """The control of the cases above: an Opacus note under source 'Opacus history' is what certify writes."""
    note = f"binary float 1.1 from Opacus; exact binary value {_X_TEXT} used"
    inputs = {"source": "Opacus history", "phase[0].noise_multiplier": _X_TEXT, "phase[0].noise_multiplier.note": note}
    assert verdict(forged_text("dpsgd/renyi-poisson", inputs=inputs)) == 0


_OPACUS_SIGMA_NOTE = "binary float 2.0 from Opacus; exact binary value 2 used"
FIXED_SIZE_OPACUS = [
    ("dpsgd/renyi-bok-schedule", {"source": "Opacus history"}),
    ("dpsgd/renyi-bok-schedule", {"phase[0].noise_multiplier.note": _OPACUS_SIGMA_NOTE}),
    ("dpsgd/renyi-birrell", {"noise_multiplier.note": _OPACUS_SIGMA_NOTE}),
]


@pytest.mark.parametrize("kind, inputs", FIXED_SIZE_OPACUS, ids=[f"{k}:{next(iter(i))}" for k, i in FIXED_SIZE_OPACUS])
def test_an_opacus_source_or_note_only_under_the_opacus_contract(kind, inputs):
    assert inputs_unforgeable_and_refused(kind, inputs)


# Fixed (issue 21): source 'command line' with two phases: the command line makes one phase (poisson/schedule.py);
#  never written
def test_a_command_line_schedule_has_one_phase():
    inputs = {"source": "command line", "phases": "2", "phase[1].noise_multiplier": "2", "phase[1].sampling_rate": "1/100", "phase[1].steps": "10"}
    assert forged_and_refused("dpsgd/renyi-poisson", inputs=inputs, witnesses=_set(("epsilon_bound",), "3"))


# Fixed (issue 21): the Poisson witness fractional = 'chord' is accepted: certify writes the key only for 'integral'
#  (chord is the default and is left out), so an explicit 'chord' is a file certify never writes
def test_the_default_fractional_mode_is_not_written():
    assert forged_and_refused("dpsgd/renyi-poisson", witnesses=_set(("fractional",), "chord"))


def test_the_integral_fractional_mode_certify_writes_verifies():
    """Control: 'integral' at the recorded fractional alpha is what certify writes with fractional='integral'."""
    assert verdict(forged_text("dpsgd/renyi-poisson", witnesses=_set(("fractional",), "integral"))) == 0


_TWIN_PHASES = {"phases": "2", "phase[1].noise_multiplier": "11/10", "phase[1].sampling_rate": "1/100", "phase[1].steps": "1000"}


# Fixed (issue 21): two consecutive identical phases under source 'Opacus history' or 'dp_accounting event' are
#  accepted: those readers merge consecutive identical entries (poisson/ecosystem.py _schedule(merge=True)), so
#  certify writes one phase of 2000 steps, never two of 1000
@pytest.mark.parametrize("source", ["Opacus history", "dp_accounting event"])
def test_a_library_schedule_has_its_identical_phases_merged(source):
    assert forged_and_refused("dpsgd/renyi-poisson", inputs=dict(_TWIN_PHASES, source=source), witnesses=_set(("epsilon_bound",), "3"))


def test_a_schedule_file_may_repeat_a_phase():
    """Control: a schedule file is not merged (certify writes its phases as given)."""
    text = forged_text("dpsgd/renyi-poisson", inputs=dict(_TWIN_PHASES, source="schedule"), witnesses=_set(("epsilon_bound",), "3"))
    assert verdict(text) == 0


# A claimed headline bound (an integer or a fraction) is written only by an audit, which restates a claim about a
# schedule file, an Opacus history or a dp_accounting event, and by a calibration, which states its target (always);
# every other run states the reported decimal. The example's source is "schedule" (one phase).
CLAIMED = [
    ("command line", "2", False),
    ("certify.api", "2", False),
    ("calibration", "1.7252295600e0", False),  # the reported decimal under a calibration: its target is stated instead
    ("schedule", "2", True),  # control: what an audit writes
    ("calibration", "2", True),  # control: what a calibration writes
]


@pytest.mark.parametrize("source, bound, writable", CLAIMED, ids=[f"{s}:{b}" for s, b, _ in CLAIMED])
def test_a_claimed_bound_only_where_a_producer_states_one(source, bound, writable):
    bound = genuine("dpsgd/renyi-poisson")["witnesses"]["epsilon_bound"] if bound.startswith("1.725") else bound
    edit = _set(("epsilon_bound",), bound)
    if writable:
        assert verdict(forged_text("dpsgd/renyi-poisson", inputs={"source": source}, witnesses=edit)) == 0
    else:
        assert forged_and_refused("dpsgd/renyi-poisson", inputs={"source": source}, witnesses=edit)


def test_a_producer_never_writes_a_source_shape_its_reader_never_makes():
    """The producer's writer checks the source's shape too (schedule_inputs): certify cannot write what verify refuses."""
    from certify.contract import POISSON_ADD_REMOVE
    from certify.balls import fmpq
    from certify.poisson.schedule import Phase, Schedule, schedule_inputs

    one = Phase(fmpq(1, 100), fmpq(11, 10), 1000)
    for source, phases in (("command line", (one, one)), ("calibration", (one, Phase(fmpq(1, 50), fmpq(2), 10))), ("Opacus history", (one, one))):
        with pytest.raises(InputError):
            schedule_inputs(Schedule(POISSON_ADD_REMOVE, phases, source=source))
    assert schedule_inputs(Schedule(POISSON_ADD_REMOVE, (one, one), source="schedule"))["phases"] == "2"


def test_a_calibration_step_size_is_the_corollarys():
    """objpert/calibration-C13 runs at Corollary 4.13's eta = 1/L (the calibration's make_problem default)."""
    inputs = genuine("objpert/calibration-C13")["inputs"]
    eta = Fraction(inputs["eta"]) / 2
    assert forged_and_refused("objpert/calibration-C13", inputs={"eta": f"{eta.numerator}/{eta.denominator}"})


def test_a_search_witness_of_a_shortcut_method_records_no_budget():
    """certify records the search budget of the branch-and-bound only; a leaf key only under it."""

    def shortcut(w):
        w["method"] = "prop2a"

    assert forged_and_refused("dpsgd/rho-bok", witnesses=shortcut)


def _extra_layout(w):
    w["layouts"]["min"] = copy.deepcopy(w["layouts"]["max"])


PLD_WITNESSES = [
    ("a profile listed twice", _set(("lower_profiles",), ["max", "max"])),
    ("a layout no profile uses", _extra_layout),
]


@pytest.mark.parametrize("label, edit", PLD_WITNESSES, ids=[label for label, _ in PLD_WITNESSES])
def test_pld_witnesses_are_as_certify_writes_them(label, edit):
    """Fixed: a lower profile listed twice and a layout for a profile that is not composed are refused
    (certify/pld/accountant.py run)."""
    assert unforgeable_and_refused("pld/dpsgd", edit)


def test_pld_tau_has_the_json_type_certify_writes():
    """Fixed (was TYPE_SWAPS pld/dpsgd:tau): tau as a JSON integer is refused; certify writes "1374389"."""
    assert unforgeable_and_refused("pld/dpsgd", _set(("tau",), 1374389))


# Fixed (issue 21): the branch-and-bound's recorded search limits are not checked against the search they describe:
#  max_evaluations = 1 with stopped_by = '' beside a 4-leaf partition (certify, so limited, stops early and says so)
def test_recorded_search_limits_agree_with_the_search():
    assert forged_and_refused("dpsgd/rho-bok", witnesses=_set(("budget", "max_evaluations"), "1"))


def _dup_point(w):
    w["points"].append(w["points"][0])


def _reverse_points(w):
    w["points"].reverse()


def _mixed_leaves(w):
    w["leaves"][0] = w["leaves"][0][:2]  # certify writes every leaf with its key, or none


BNB_LISTS = [
    ("dpsgd/rho-bok", _dup_point),
    ("dpsgd/rho-bok", _reverse_points),
    ("dpsgd/rho-bok", _mixed_leaves),
    ("dpsgd/renyi-bok-schedule", _phase0(_reverse_points)),
]


# Fixed (issue 21): branch-and-bound witness lists: points duplicated or out of order, and leaves with and without
#  their key in one list, are accepted (witness_from_json reads points into a dict and leaf keys one by one); certify
#  writes points in leaf order, once each, and all leaf keys or none
@pytest.mark.slow
@pytest.mark.parametrize("kind, edit", BNB_LISTS, ids=[f"{k}:{e.__name__ if hasattr(e, '__name__') else 'edit'}" for k, e in BNB_LISTS])
def test_branch_and_bound_witness_lists_are_as_certify_writes_them(kind, edit):
    assert forged_and_refused(kind, witnesses=edit)


@pytest.mark.slow
def test_schedule_phases_reordered_in_witnesses_only_are_refused():
    """Phases swapped in inputs and witnesses together are another schedule file (certify writes it: control);
    swapped in the witnesses only, the evaluator refuses them."""
    inputs = genuine("dpsgd/renyi-bok-schedule")["inputs"]
    swapped = {f"phase[{i}].{f}": inputs[f"phase[{1 - i}].{f}"] for i in (0, 1) for f in ("noise_multiplier", "sampling_rate", "steps")}

    def reverse(w):
        w["phases"].reverse()

    assert verdict(forged_text("dpsgd/renyi-bok-schedule", inputs=swapped, witnesses=reverse)) == 0
    with pytest.raises(InputError):
        forged_text("dpsgd/renyi-bok-schedule", witnesses=reverse)


@pytest.mark.slow
def test_branch_and_bound_leaves_that_do_not_cover_are_refused():
    def gap(w):
        w["leaves"][1][0] = "3/16"

    assert forged_and_refused("dpsgd/rho-bok", witnesses=gap)


# A producer must never write a file its checker refuses, and the bytes it writes must not depend on how a value
# was typed: every recorded input is exact_str of the parsed value.
BATCH_SPELLINGS = [("06", "600"), ("6.0", "600"), ("+6", "600"), ("6e0", "6.0e2")]


@pytest.mark.parametrize("b, n", BATCH_SPELLINGS, ids=[f"{b}/{n}" for b, n in BATCH_SPELLINGS])
def test_dpsgd_records_batch_and_dataset_size_as_certify_spells_them(tmp_path, b, n):
    path = tmp_path / "c.json"
    argv = ["dpsgd", "--sampling", "fixed-size", "--noise-multiplier", "2", "--steps", "10", "--delta", "1e-6", "--accountant", "birrell"]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        rc = cli.main([*argv, "--batch-size", b, "--dataset-size", n, "--out", str(path)])
    assert rc == 0
    text = path.read_text()
    assert json.loads(text)["inputs"]["batch_size"] == "6" and json.loads(text)["inputs"]["dataset_size"] == "600"
    assert verdict(text) == 0


# Regression: spellings the canonical form refuses (they must stay refused). Each is re-sealed and written exactly
# as certify writes documents, so only check_spelling / the canonical comparison can refuse it.
SPELLINGS = [
    ("objpert/theorem-4.1", "inputs", "loss", "log\u0456stic"),  # Cyrillic i
    ("objpert/theorem-4.1", "inputs", "loss", "logistic\u200b"),  # zero-width space
    ("dpsgd/renyi-poisson", "inputs", "adjacency", "add\u2010remove"),  # Unicode hyphen
    ("dpsgd/renyi-poisson", "inputs", "source", "schedule\x00"),
    ("dpsgd/renyi-poisson", "inputs", "source", "sche\x1b[2Kdule"),
    ("dpsgd/renyi-poisson", "inputs", "delta", "1/1e5"),
    ("dpsgd/renyi-poisson", "inputs", "delta", "10/1000000"),
    ("dpsgd/renyi-poisson", "inputs", "phase[0].steps", "1000.0"),
    ("dpsgd/renyi-poisson", "inputs", "phase[0].steps", "+1000"),
    ("dpsgd/renyi-poisson", "witnesses", "epsilon_bound", "1.7252295600e+0"),
    ("dpsgd/renyi-poisson", "witnesses", "epsilon_bound", "1.0e1"),
    ("dpsgd/renyi-poisson", "witnesses", "epsilon_bound", "-0"),
    ("dpsgd/renyi-poisson", "witnesses", "epsilon_bound", "17.25229560e-1"),
    ("dpsgd/renyi-poisson", "witnesses", "epsilon_bound", "\u0661.725229560e0"),  # Arabic-Indic one
    ("dpsgd/renyi-poisson", "witnesses", "alpha", "74/8"),
    ("dpsgd/renyi-poisson", "witnesses", "alpha", "9.25"),
    ("pld/dpsgd", "witnesses", "tau", "01374389"),
    ("pld/dpsgd", "witnesses", "epsilon_upper", "7827469/16777216 "),
]


@pytest.mark.parametrize("kind, where, key, value", SPELLINGS, ids=[f"{k}:{w}.{n}={v!r}" for k, w, n, v in SPELLINGS])
def test_spellings_certify_never_writes_are_refused(kind, where, key, value):
    doc = genuine(kind)
    doc[where][key] = value
    assert verdict(canonical_text(doc)) in (2, 4, 5)


@pytest.mark.parametrize("kind", ["objpert/calibration-C13", "pld/dpsgd", "dpsgd/renyi-bok-schedule"])
def test_witness_keys_unsorted_at_depth_are_refused(kind):
    text = genuine_text(kind)
    doc = json.loads(text)

    def unsort(obj, depth=0):
        if isinstance(obj, dict):
            items = [(k, unsort(v, depth + 1)) for k, v in obj.items()]
            return dict(reversed(items)) if depth >= 1 and len(items) > 1 else dict(items)
        if isinstance(obj, list):
            return [unsort(v, depth + 1) for v in obj]
        return obj

    doc["witnesses"] = unsort(doc["witnesses"])
    forged = json.dumps(doc, indent=2) + "\n"  # keys at depth in another order, otherwise certify's layout
    assert forged != text and verdict(forged) == 4


@pytest.mark.parametrize(
    "respell",
    [
        lambda t: "\ufeff" + t,  # a byte-order mark
        lambda t: t.replace("\n", "\r\n"),
        lambda t: t + " ",
        lambda t: t + "\n",
        lambda t: t.replace("  ", "\t"),
        lambda t: t.replace("1/100", "1\\/100", 1),  # JSON escape of '/'
        lambda t: t.replace('"schema"', '"\\u0073chema"', 1),  # JSON escape of an ASCII letter
    ],
    ids=["bom", "crlf", "trailing space", "two newlines", "tabs", "escaped slash", "escaped letter"],
)
def test_the_same_json_in_other_bytes_is_refused(respell):
    text = genuine_text("dpsgd/renyi-poisson")
    forged = respell(text)
    assert forged != text and verdict(forged) in (2, 4)


@pytest.mark.parametrize(
    "software",
    [
        {"certify": "0.1", "python-flint": "0.9.0", "x": "1"},
        {"certify": "0.1\u00a0", "python-flint": "0.9.0"},
        {"certify": "0.1", "python-flint": "0.9.0 HOLDS"},
        {"certify": "", "python-flint": "0.9.0"},
        {"certify": 1, "python-flint": "0.9.0"},
    ],
)
def test_software_strings_certify_never_writes_are_refused(software):
    doc = genuine("dpsgd/renyi-poisson")
    doc["software"] = software
    assert verdict(json.dumps(doc, indent=2, ensure_ascii=True) + "\n") == 4


def _recorded_128_decided_at_256() -> str:
    """A Poisson certificate whose epsilon_bound lies 2^-200 above the epsilon ball's 600-bit upper end: its claim is
    undecided at 128 bits and decided at 256. The forger writes the 256-bit re-derivation under "precision": 128
    (certify's producer escalates and records 256)."""
    from certify.balls import ctx
    from certify.certificate import SOFTWARE, render_document

    kind = "dpsgd/renyi-poisson"
    doc = genuine(kind)
    evaluator = spec_for(kind).evaluator
    with ctx.workprec(600):
        up = evaluator(doc["inputs"], doc["witnesses"]).quantities["epsilon"].value.upper().fmpq()
    bound = Fraction(-((-Fraction(int(up.p), int(up.q)) - Fraction(1, 2**200)) * 2**210 // 1), 2**210)  # a dyadic above
    doc["witnesses"]["epsilon_bound"] = f"{bound.numerator}/{bound.denominator}"
    with ctx.workprec(256):
        ev = evaluator(doc["inputs"], doc["witnesses"])
    return dumps_document(render_document(kind, 128, doc["inputs"], ev, doc["witnesses"], None, SOFTWARE))


def test_a_certificate_undecided_at_its_recorded_precision_is_refused_there():
    assert verdict(_recorded_128_decided_at_256()) == 4


def test_a_certificate_undecided_at_its_recorded_precision_is_refused_at_any_precision():
    rep = verify_text(_recorded_128_decided_at_256(), 256)
    assert rep.exit_code not in ACCEPTED


# --------------------------------------------------------------------------------------------
# 2. Genuine certificates at 1x, 2x, 4x; the CLI output of forged files
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_every_genuine_certificate_verifies_at_1x_2x_4x_from_its_text(kind):
    text = genuine_text(kind)
    rec = json.loads(text)["precision"]
    for factor in (1, 2, 4) if kind not in SLOW_AT_4X else (1, 2):
        rep = verify_text(text, rec * factor)
        assert rep.exit_code == 0, (kind, factor, rep.problems[:2])
        assert any("canonical document" in c for c in rep.checked), (kind, factor)


#: kinds whose 4x re-derivation costs more than a second of CPU (checked in the slow test below)
SLOW_AT_4X = ("dpsgd/renyi-bok", "dpsgd/renyi-bok-schedule", "dpsgd/rho-bok", "dpsgd/renyi-wang", "dpsgd/renyi-poisson-fails")


@pytest.mark.slow
@pytest.mark.parametrize("kind", SLOW_AT_4X)
def test_genuine_certificates_of_costly_kinds_verify_at_4x(kind):
    text = genuine_text(kind)
    rep = verify_text(text, 4 * json.loads(text)["precision"])
    assert rep.exit_code == 0, rep.problems[:2]


def _variants():
    from certify.contract import POISSON_ADD_REMOVE
    from certify.objpert import tables as T
    from certify.objpert.certificates import certify_theorem_4_1
    from certify.pld import certify_pld
    from certify.poisson.accountant import certify_poisson
    from certify.poisson.schedule import parse_schedule

    schedule = parse_schedule([{"sampling_rate": "1/100", "noise_multiplier": "11/10", "steps": 1000}], contract=POISSON_ADD_REMOVE)
    return {
        "pld/dpsgd poisson": lambda: certify_pld(POISSON_ADD_REMOVE, "1/100", "2", 20, "1e-5", grid="1e-3"),
        "dpsgd/renyi-poisson integral": lambda: certify_poisson(schedule, "1e-5", fractional="integral"),
        "objpert/theorem-4.1 smallest N": lambda: certify_theorem_4_1(T.example_problem("1/100"), "1"),
    }


@pytest.mark.parametrize("name", ["pld/dpsgd poisson", "dpsgd/renyi-poisson integral", "objpert/theorem-4.1 smallest N"])
def test_genuine_variants_verify_at_1x_2x_4x_from_their_text(name):
    text = _variants()[name]().dumps()
    rec = json.loads(text)["precision"]
    for factor in (1, 2, 4):
        rep = verify_text(text, rec * factor)
        assert rep.exit_code == 0, (name, factor, rep.problems[:2])


def run_verify(path, *flags) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(["verify", *flags, str(path)])
    return rc, out.getvalue(), err.getvalue()


def _inconsistent_forgery() -> str:
    """A lie after a carriage return in a reported bound (refused by its spelling)."""
    doc = genuine("dpsgd/renyi-poisson")
    doc["witnesses"]["epsilon_bound"] = "1.8\r(0.100000, 1/100000)-DP: HOLDS"
    return canonical_text(doc)


def _not_proved_forgery() -> str:
    """Theorem 4.1 at N = 1000, below the threshold (7): its first conclusion fails, the second (C.13) holds.
    (A reported delta below the certified one can no longer be regenerated: the evaluator refuses it.)"""
    return forged_text("objpert/theorem-4.1", inputs={"iterations": "1000"}, witnesses=_set(("iterations",), 1000))


def _check_cli_output(rc, out, err, code):
    lines = out.splitlines()
    assert rc == code
    assert lines and lines[-1].startswith(("REJECTED", "NOT PROVED")), lines[-1:]
    assert all(c == "\n" or c.isprintable() for c in out + err)
    assert len(err.splitlines()) == 1 and err.splitlines()[0] == lines[-1]


@pytest.mark.parametrize("quiet", [False, True])
def test_cli_output_of_an_inconsistent_forgery(tmp_path, quiet):
    path = tmp_path / "forged.json"
    path.write_text(_inconsistent_forgery())
    rc, out, err = run_verify(path, *(["--quiet"] if quiet else []))
    _check_cli_output(rc, out, err, 4)
    assert not any(line.rstrip().endswith("HOLDS") for line in out.splitlines())


@pytest.mark.parametrize("quiet", [False, True])
def test_cli_output_of_a_not_proved_forgery_has_no_holds_line(tmp_path, quiet):
    path = tmp_path / "forged.json"
    path.write_text(_not_proved_forgery())
    rc, out, err = run_verify(path, *(["--quiet"] if quiet else []))
    _check_cli_output(rc, out, err, 5)
    assert not any(line.rstrip().endswith("HOLDS") for line in out.splitlines()), out


def test_cli_output_of_a_not_proved_forgery_ends_with_the_verdict(tmp_path):
    path = tmp_path / "forged.json"
    path.write_text(_not_proved_forgery())
    _check_cli_output(*run_verify(path, "--quiet"), 5)


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.update(kind="dpsgd/renyi-poisson\r\x1b[2KVERIFIED"),
        lambda d: d.update(schema="certify/3\rVERIFIED"),
        lambda d: d["inputs"].update({"x\rVERIFIED: every conclusion holds": "1"}),
        lambda d: d["witnesses"].update(epsilon_bound="\u202e1.7252295600e0"),
        lambda d: d["quantities"].update({"\x1b]0;owned\x07": {}}),
    ],
)
def test_cli_escapes_control_characters_from_a_forged_file(tmp_path, edit):
    doc = genuine("dpsgd/renyi-poisson")
    edit(doc)
    path = tmp_path / "forged.json"
    path.write_text(canonical_text(doc))
    rc, out, err = run_verify(path)
    assert rc in (2, 4)
    assert all(c == "\n" or c.isprintable() for c in out + err), (out + err)[-300:]
    assert len(err.splitlines()) == 1
    if rc == 4:  # the verdict ends stdout and is the stderr line
        assert out.splitlines()[-1].startswith("REJECTED") and out.splitlines()[-1] == err.strip()
    assert not any(line.startswith("VERIFIED") or line.rstrip().endswith("HOLDS") for line in out.splitlines())


def test_cli_escapes_a_file_name_with_control_characters(tmp_path):
    path = tmp_path / "a\rVERIFIED: every conclusion holds.json"
    path.write_text(_inconsistent_forgery())
    rc, out, err = run_verify(path, "--quiet")
    _check_cli_output(rc, out, err, 4)


def test_verify_kernel_without_the_kernel_is_one_line(tmp_path):
    from unittest import mock

    path = tmp_path / "c.json"
    path.write_text(genuine_text("dpsgd/renyi-poisson"))
    with mock.patch.dict(sys.modules, {"certify_kernel": None}):  # import certify_kernel raises ImportError
        rc, out, err = run_verify(path, "--kernel")
    assert rc == 2 and len(err.splitlines()) == 1 and "--kernel" in err


# --------------------------------------------------------------------------------------------
# 3. Hostile files against verify and report (quick checks; helper A tested the reader's limits)
# --------------------------------------------------------------------------------------------
def _hostile_paths(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(MAX_BYTES + 1)
    deep64, deep65 = tmp_path / "deep64.json", tmp_path / "deep65.json"
    deep64.write_text('{"a":' * 63 + "[]" + "}" * 63)
    deep65.write_text("[" * 65 + "]" * 65)
    return {"fifo": fifo, "device link": link, "directory": tmp_path, "too large": big, "depth 64": deep64, "depth 65": deep65}


def test_hostile_files_against_verify_and_report(tmp_path):
    """One subprocess per command runs every hostile path in-process (a FIFO must not block it): exit 2, one stderr
    line, no traceback, no output file."""
    paths = _hostile_paths(tmp_path)
    out_html = tmp_path / "out" / "r.html"
    out_html.parent.mkdir()
    script = (
        "import sys, io, contextlib, json\n"
        "from certify import cli\n"
        "res = {}\n"
        "for label, cmd in json.loads(sys.argv[1]):\n"
        "    err = io.StringIO()\n"
        "    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):\n"
        "        rc = cli.main(cmd)\n"
        "    res[label] = [rc, err.getvalue()]\n"
        "print(json.dumps(res))\n"
    )
    cases = []
    for label, p in paths.items():
        cases.append((f"verify {label}", ["verify", str(p)]))
        cases.append((f"report {label}", ["report", "--out", str(out_html), str(p)]))
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "-c", script, json.dumps(cases)], capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-500:]
    res = json.loads(proc.stdout)
    for label, (rc, err) in res.items():
        assert rc == 2, (label, rc, err)
        assert len(err.splitlines()) == 1 and "Traceback" not in err, (label, err)
    assert "64 levels" in res["verify depth 65"][1] and "levels" not in res["verify depth 64"][1]
    assert not out_html.exists() and os.listdir(out_html.parent) == []


def test_report_refuses_a_special_output_before_any_work(tmp_path):
    src = tmp_path / "c.json"
    src.write_text(genuine_text("dpsgd/renyi-poisson"))
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = cli.main(["report", "--out", str(fifo), str(src)])
    assert rc == 2 and "--out" in err.getvalue() and len(err.getvalue().splitlines()) == 1
    import stat

    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_precision_changed_without_re_derivation_is_refused():
    """A forger who changes only the recorded precision and re-seals (the balls stay those of 128 bits) is refused."""
    doc = genuine("dpsgd/renyi-poisson")
    doc["precision"] = 256
    assert verdict(canonical_text(doc)) == 4


def test_pld_k_that_does_not_give_the_recorded_precision_is_refused():
    """Fixed: K + 1 at the same recorded precision (certify records K + EXTRA_PREC)."""
    doc = genuine("pld/dpsgd")
    doc["witnesses"]["K"] += 1
    assert refused(canonical_text(reseal(doc)))


def test_a_c13_search_only_with_a_target():
    """certify writes the Theorem C.13 witness only when a target delta is an input: added to a certificate without
    one, it is a file certify never writes (the evaluator ignored it before)."""
    doc = json.loads(_variants()["objpert/theorem-4.1 smallest N"]().dumps())
    assert "target_delta" not in doc["inputs"]
    doc["witnesses"]["theorem_C13"] = genuine("objpert/theorem-4.1")["witnesses"]["theorem_C13"]
    with pytest.raises(InputError, match="theorem_C13"):
        regenerate(doc)
    assert refused(canonical_text(reseal(doc)))
