"""A forger's attack on what landed on 2026-12-02: ``events/pld`` certificates of MixtureOfGaussiansDpEvent, the PLD
layouts the checker re-derives, a branch-and-bound stopped by time, leaf keys, and the second checker (renyi-bok, memo).

The forger's standard (issue 21): what ``certify verify`` accepts is exactly the document certify writes for those
inputs, and the kernel agrees. Each forgery is a genuine certificate (made here by certify's own producers) edited,
re-run through certify's evaluator where it can be (``test_forger_events.forged``) or re-sealed as it stands
(``resealed``), and written as certify writes a document. Files that are byte for byte what certify writes for the
respelt inputs (components reordered, split or of probability 0; the other relation dp_accounting allows) are controls,
as is the documented layout margin (an index on its boundary may take either value).

Fixed here (certify_kernel/bok.py): the kernel accepted renyi-bok leaf keys respelt, looser, tighter, "hello" or null,
and negated or reworded statements and descriptions that quote no new number ("epsilon > ...", "are NOT (...)-DP").

Fixed since (certify/pld/accountant.py, certify/events/pld_certificates.py): a layout object with a key certify never
writes, or an empty ``bands`` list (events/pld and pld/dpsgd: ``Plan.from_json``); ``events/pld``'s K and tau, now
re-derived by ``certify.pld.ledger.plan`` (exact, no floats).

Also fixed since: a search budget certify refuses to run (``max_evaluations`` above the cap, a negative
``max_seconds``), after a stop by time and after a finished search, and a finished search's curvature thetas
(certify/dpsgd: one budget check for producer and reader, thetas re-derived by ``theta_choice``); the kernel's
acceptance of negated prose on objpert and renyi-poisson-fails and of renyi-bok points and budgets certify refuses
(every kind's prose is now re-derived word for word; a well-formed rule certify would not choose is a documented
designed disagreement, docs/kernel.md).
"""

from __future__ import annotations

import copy
import json
import os
import sys

import pytest

import certify_kernel
from certify.balls import InputError
from certify.events.ledger import ledger_of
from certify.events.pld_certificates import certify_events_pld
from certify.verify import spec_for, verify_text

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_forger import reseal  # noqa: E402  (the forger's tools, written once)
from test_forger21 import canonical_text  # noqa: E402
from test_forger_events import certify_says, forged, kernel_says  # noqa: E402


def mixture(sigma, c, p) -> dict:
    return {"class_name": "MixtureOfGaussiansDpEvent", "standard_deviation": sigma, "sensitivities": c, "sampling_probs": p}


#: dp_accounting's mixture_gaussian_*_1 (privacy_loss_mechanism_test.py): sigma 1, c = (0, 1, 2), p = (1/5, 3/5, 1/5)
A = (1, [0, 1, 2], ["1/5", "3/5", "1/5"])


def made(event: dict, relation: str = "add-remove") -> str:
    """The text certify writes for one mixture at epsilon 1 on the grid 1/100 (about 1 CPU s the first time)."""
    return certify_events_pld(ledger_of(event, relation), epsilon="1", grid="1e-2").dumps()


@pytest.fixture(scope="module")
def genuine() -> dict:
    return json.loads(made(mixture(*A)))


def exit_of(text: str) -> int:
    """``certify verify``'s exit status (6: a search stopped early), 2 when it refuses the work or the input."""
    try:
        return verify_text(text).exit_code
    except InputError:
        return 2


def resealed(doc: dict, edit) -> str:
    """The forger's file without re-running the evaluator: ``edit`` applied, digest re-sealed, written as certify writes."""
    d = copy.deepcopy(doc)
    edit(d)
    return canonical_text(reseal(d))


# --------------------------------------------------------------------------------------------
# events/pld of MixtureOfGaussiansDpEvent: the recorded lists
# --------------------------------------------------------------------------------------------
S, P = "event[0].sensitivities", "event[0].sampling_probs"


def test_genuine_mixture_verifies(genuine):
    text = canonical_text(genuine)
    assert text == made(mixture(*A))
    assert certify_says(text) == 0
    assert kernel_says(text) == 2  # events/pld is not a kind the kernel covers: it says so (exit 2), never accepts


#: inputs another user could give: certify writes exactly these files for them (the same mechanism, or the other relation)
EQUIVALENT = {
    "components reordered": ({S: "2,1,0", P: "1/5,3/5,1/5"}, mixture(1, [2, 1, 0], ["1/5", "3/5", "1/5"]), "add-remove"),
    "a component split in two": ({S: "0,1,1,2", P: "1/5,3/10,3/10,1/5"}, mixture(1, [0, 1, 1, 2], ["1/5", "3/10", "3/10", "1/5"]), "add-remove"),
    "a component of probability 0": ({S: "0,1,2,7", P: "1/5,3/5,1/5,0"}, mixture(1, [0, 1, 2, 7], ["1/5", "3/5", "1/5", "0"]), "add-remove"),
    "the zero sensitivity moved last": ({S: "1,2,0", P: "3/5,1/5,1/5"}, mixture(1, [1, 2, 0], ["3/5", "1/5", "1/5"]), "add-remove"),
    "replace-special": ({"neighboring": "replace-special"}, mixture(*A), "replace-special"),
}


@pytest.mark.parametrize("case", sorted(EQUIVALENT))
def test_respelt_mixture_is_what_certify_writes(genuine, case):
    """Control: a file the forger re-derives for other inputs of the same mechanism verifies, and it is byte for byte
    what certify writes for those inputs (a true certificate of those inputs, not a forgery)."""
    inputs, event, relation = EQUIVALENT[case]
    text = forged(genuine, inputs)
    assert text == made(event, relation)
    assert certify_says(text) == 0


#: spellings of the lists certify never writes (it writes exact_str of each element, joined by ",")
SPELLINGS = {
    "a space after a comma": {S: "0, 1,2"},
    "a plus sign": {S: "0,+1,2"},
    "1.0": {S: "0,1.0,2"},
    "a leading zero": {S: "0,01,2"},
    "1e0": {S: "0,1e0,2"},
    "a trailing comma": {S: "0,1,2,"},
    "an empty element": {S: "0,,1,2"},
    "-0": {S: "-0,1,2"},
    "an Arabic-Indic digit": {S: "0,\u0661,2"},
    "a decimal probability": {P: "0.2,3/5,1/5"},
    "an unreduced probability": {P: "2/10,3/5,1/5"},
    "probabilities summing to 1 only after rounding": {P: "1/5,3/5,0.20000000000000001"},
    "standard deviation 1.0": {"event[0].standard_deviation": "1.0"},
    "standard deviation 2/2": {"event[0].standard_deviation": "2/2"},
    "relation replace-one (not the event's)": {"neighboring": "replace-one"},
}


@pytest.mark.parametrize("case", sorted(SPELLINGS))
def test_list_spellings_refused(genuine, case):
    assert certify_says(forged(genuine, SPELLINGS[case])) in (4, 5)


def _privacy(d):
    return next(c for c in d["claims"] if c["name"] == "privacy")


PROSE = {
    "claim names another relation": lambda d: _privacy(d).update(statement=_privacy(d)["statement"].replace("add-remove", "replace-one")),
    "claim relation field": lambda d: _privacy(d).update(relation="<"),
    "claim rhs looser": lambda d: _privacy(d).update(rhs="1.576828410e-1"),
    "conclusion with a trailing space": lambda d: d["conclusions"][0].update(statement=d["conclusions"][0]["statement"] + " "),
    "headline bound looser": lambda d: d["witnesses"].update(bound="1.576828410e-1"),
    "lower_directions names the other direction": lambda d: d["witnesses"].update(lower_directions=["add"]),
    "lower_directions twice": lambda d: d["witnesses"].update(lower_directions=["remove", "remove"]),
}


@pytest.mark.parametrize("case", sorted(PROSE))
def test_mixture_prose_and_witness_edits_refused(genuine, case):
    assert certify_says(resealed(genuine, PROSE[case])) in (4, 5)


# --------------------------------------------------------------------------------------------
# PLD layouts (certify.pld.certificates.check_layouts, certify.pld.accountant.Plan.from_json)
# --------------------------------------------------------------------------------------------
def _layout(d, key="0/add"):
    return d["witnesses"]["layouts"][key]


LAYOUT_EDITS = {
    "an index moved by one (not near a boundary)": lambda d: _layout(d).update(lo=_layout(d)["lo"] - 1),
    "a layout for an entry that does not exist": lambda d: d["witnesses"]["layouts"].update({"1/add": _layout(d)}),
    "a missing layout": lambda d: d["witnesses"]["layouts"].pop("0/add"),
    "a stride written 8.0": lambda d: _layout(d).update(stride=8.0),
    "K written true": lambda d: d["witnesses"].update(K=True),
    "tau as a JSON number": lambda d: d["witnesses"].update(tau=int(d["witnesses"]["tau"])),
}


@pytest.mark.parametrize("case", sorted(LAYOUT_EDITS))
def test_layout_edits_refused(genuine, case):
    assert certify_says(resealed(genuine, LAYOUT_EDITS[case])) != 0


NOT_WRITTEN = {
    "a key certify never writes in a layout": lambda d: _layout(d).update(junk=1),
    "an empty bands list (certify omits the key)": lambda d: _layout(d).update(bands=[]),
}


@pytest.mark.parametrize("case", sorted(NOT_WRITTEN))
def test_layout_objects_are_the_ones_certify_writes(genuine, case):
    assert certify_says(resealed(genuine, NOT_WRITTEN[case])) != 0


@pytest.mark.parametrize("edit", ["tau=0", "tau=1801440", "tau=1801439000000", "K=83", "K=85", "K=120"])
def test_events_pld_K_and_tau_are_the_ones_certify_chooses(genuine, edit):
    """tau edited alone (the file re-sealed); K with the numbers certify's evaluator derives at it (precision K + 96)."""
    key, value = edit.split("=")
    assert (genuine["witnesses"]["K"], genuine["witnesses"]["tau"]) == (84, "1801439")
    if key == "tau":
        text = resealed(genuine, lambda d: d["witnesses"].update(tau=value))
    else:
        text = forged(genuine, witnesses=lambda w: w.update(K=int(value)))
        assert json.loads(text)["witnesses"]["K"] == int(value)
    assert certify_says(text) != 0


# --------------------------------------------------------------------------------------------
# A branch-and-bound stopped by time (dpsgd/rho-bok, budget.stopped_by = "seconds")
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def time_stop() -> dict:
    """A genuine rho-bok certificate whose search stopped by time after 2 evaluations (fake clock, as in
    tests/test_dpsgd_stopped_by_seconds.py)."""
    from test_dpsgd_stopped_by_seconds import time_stopped

    doc = time_stopped(1)
    assert doc["witnesses"]["budget"] == {"evaluations": "2", "max_evaluations": "2000", "max_seconds": "1", "stopped_by": "seconds"}
    return doc


def _budget(**kw):
    return lambda d: d["witnesses"]["budget"].update(**kw)


def test_time_stop_genuine_and_respelt(time_stop):
    """Control (exit 6: a search stopped early), then evaluation counts and limits spelt otherwise are refused."""
    assert exit_of(resealed(time_stop, lambda d: None)) == 6
    for e in ("02", "2.0", "+2", " 2", "\u0662", "2/1"):
        assert certify_says(resealed(time_stop, _budget(evaluations=e))) == 4, e
    assert certify_says(resealed(time_stop, _budget(max_seconds="1.0"))) == 4
    assert certify_says(resealed(time_stop, _budget(max_evaluations="1000000000000", evaluations="100000000000"))) == 2


@pytest.mark.parametrize("edit", ["max_evaluations=20001", "max_evaluations=1000000000000", "max_seconds=-1"])
def test_time_stop_budget_is_one_certify_runs(time_stop, edit):
    key, value = edit.split("=")
    assert exit_of(resealed(time_stop, _budget(**{key: value}))) not in (0, 6)


# --------------------------------------------------------------------------------------------
# dpsgd/renyi-bok: leaf keys, curvature witnesses, prose; the second checker beside certify
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bok() -> dict:
    """A genuine renyi-bok certificate (fixed-size, p = 1/100, sigma = 2, T = 1000: 4 leaves, maximum at u = 0)."""
    from certify import api

    cert = api.dpsgd_epsilon(sampling="fixed-size", adjacency="replace-one", sampling_rate="1/100", noise_multiplier="2", steps=1000, delta="1e-6")
    return json.loads(cert.certificate.dumps())


def _key(i: int, text):
    return lambda d: d["witnesses"]["leaves"][i].__setitem__(2, text)


@pytest.mark.slow  # about 1 CPU s: the kernel re-bounds every leaf with its own quadrature
def test_bok_genuine_accepted_by_both(bok):
    text = canonical_text(bok)
    assert (certify_says(text), kernel_says(text)) == (0, 0)


def _leaf_key_spellings(key: str) -> dict:
    mant, exp = key.split("e")
    last = int(mant[-1])
    return {
        "capital E": key.replace("e", "E"),
        "a trailing zero": f"{mant}0e{exp}",
        "a plus sign": "+" + key,
        "a two-digit exponent": key.replace("e-", "e-0"),
        "one unit looser": f"{mant[:-1]}{(last + 1) % 10}e{exp}",
        "one unit tighter": f"{mant[:-1]}{(last - 1) % 10}e{exp}",
        "not a number": "hello",
        "null": None,
    }


def test_bok_leaf_keys_respelt_refused_by_both(bok):
    """Fixed here (certify_kernel/bok.py): the kernel never read the recorded leaf keys (it re-bounds every leaf itself), so
    it accepted a key respelt, one unit looser or tighter, "hello" or null, all of which certify refuses. It now demands
    the text certify writes: quantity leaf[i]'s upper end rounded up to 12 digits."""
    key = bok["witnesses"]["leaves"][1][2]
    assert key == "8.80135049393e-4"
    for name, text in _leaf_key_spellings(key).items():
        forged_text = resealed(bok, _key(1, text))
        assert (certify_says(forged_text), kernel_says(forged_text)) == (4, 4), name


def _leaf_description(d) -> str:
    return d["quantities"]["leaf[1]"]["description"]


def _bok_claim(d, name):
    return next(c for c in d["claims"] if c["name"] == name)


BOK_PROSE = {
    "claim dp negated": lambda d: _bok_claim(d, "dp").update(statement=_bok_claim(d, "dp")["statement"].replace("<=", ">")),
    "hypothesis reworded": lambda d: _bok_claim(d, "delta_below_1").update(statement="delta = 1/1000000 is not < 1"),
    "search claim negated": lambda d: _bok_claim(d, "search_met_gamma").update(statement="the search did NOT stop at its tolerance"),
    "conclusion negated": lambda d: d["conclusions"][0].update(statement=d["conclusions"][0]["statement"].replace(" are (", " are NOT (")),
    "conclusion with a mark": lambda d: d["conclusions"][0].update(statement=d["conclusions"][0]["statement"] + "!"),
    "rho description": lambda d: d["quantities"]["rho"].update(description="an estimate, not a bound"),
    "leaf description: another level": lambda d: d["quantities"]["leaf[1]"].update(
        description=d["quantities"]["leaf[1]"]["description"].replace("kneg", "full")
    ),
}


@pytest.mark.slow  # about 1 CPU s: one kernel derivation (the edits keep its memo key)
@pytest.mark.parametrize("case", sorted(BOK_PROSE))
def test_bok_prose_refused_by_both(bok, case):
    """Fixed here (certify_kernel/bok.py): the kernel checked renyi-bok prose for unchecked numbers only, so a negated claim
    ("epsilon > 2.436693804e0") or conclusion ("are NOT (...)-DP") quoting no new number was accepted with "1 conclusion(s)
    hold". It now re-derives every statement and description certify writes for a finished branch-and-bound."""
    text = resealed(bok, BOK_PROSE[case])
    assert (certify_says(text), kernel_says(text)) == (4, 4)


def test_bok_curvature_thetas_are_the_ones_certify_chooses(bok):
    assert bok["witnesses"]["curvature"][0]["thetas"][0] != 1
    text = resealed(bok, lambda d: d["witnesses"]["curvature"][0]["thetas"].__setitem__(0, 1))
    assert certify_says(text) != 0


@pytest.mark.parametrize("edit", ["max_evaluations=99999999", "max_seconds=-5"])
def test_bok_finished_search_budget_is_one_certify_runs(bok, edit):
    key, value = edit.split("=")
    text = resealed(bok, lambda d: d["witnesses"]["budget"].update({key: value}))
    assert certify_says(text) != 0


# --------------------------------------------------------------------------------------------
# The second checker: prose it re-derives word for word, renyi-bok witnesses it reads for their layout
# --------------------------------------------------------------------------------------------
_EXAMPLES: dict = {}


def example(kind: str) -> dict:
    """The kind's registered example, as certify writes it (made once)."""
    if kind not in _EXAMPLES:
        _EXAMPLES[kind] = json.loads(spec_for(kind).example().dumps())
    return copy.deepcopy(_EXAMPLES[kind])


def _reword(part: str, name: str, old: str, new: str):
    def edit(d):
        entry = next(c for c in d[part] if c["name"] == name)
        assert old in entry["statement"], entry["statement"]
        entry["statement"] = entry["statement"].replace(old, new, 1)

    return edit


#: statements negated without quoting a new number (issue 21's "conclusion negated", on the kinds whose prose the kernel
#: once only scanned for unchecked numbers)
NEGATED = {
    "objpert: Theorem 4.1 conclusion": ("objpert/theorem-4.1", _reword("conclusions", "dp_theorem_4_1", "the release is (", "the release is NOT (")),
    "objpert: first C.13 conclusion": ("objpert/theorem-4.1", _reword("conclusions", "first_passing_c13", "is N = 519", "is NOT N = 519")),
    "objpert: C.13 claim": ("objpert/theorem-4.1", _reword("claims", "dp_C13", "is (1, delta_N)", "is NOT (1, delta_N)")),
    "objpert: radius claim": ("objpert/theorem-4.1", _reword("claims", "radius_condition", "holds", "fails")),
    "renyi-poisson-fails: claim": ("dpsgd/renyi-poisson-fails", _reword("claims", "fails", "certifies no epsilon", "certifies an epsilon")),
    "renyi-poisson-fails: conclusion": ("dpsgd/renyi-poisson-fails", _reword("conclusions", "fails", "does not meet", "meets")),
}


@pytest.mark.slow  # about 4 CPU s (the kernel's 270 orders of the failing side, Theorem C.13's search)
@pytest.mark.parametrize("case", sorted(NEGATED))
def test_kernel_refuses_negated_prose(case):
    """Fixed (certify_kernel/objpert.py, poisson_fails.py): the kernel re-derives every statement and description word
    for word, as certify writes them (docs/kernel.md, "Prose is re-derived word for word")."""
    kind, edit = NEGATED[case]
    text = resealed(example(kind), edit)
    assert certify_says(text) == 4
    assert kernel_says(text) == 4, certify_kernel.check_text(text).message


def test_pld_dpsgd_layout_objects_are_the_ones_certify_writes():
    doc = example("pld/dpsgd")
    assert certify_says(canonical_text(doc)) == 0
    key = sorted(doc["witnesses"]["layouts"])[0]
    assert certify_says(resealed(doc, lambda d: d["witnesses"]["layouts"][key].update(junk=1))) != 0


@pytest.mark.slow  # about 2 CPU s: two cold kernel derivations of the renyi-bok certificate
def test_kernel_warm_memo_gives_cold_verdicts(bok):
    """The kernel's memo (keyed by kind, precision, inputs, witnesses and the recorded quantities a kind READS): in one
    process, a genuine file and forgeries that share its key or not, in both orders, get the verdicts of a cold start."""
    texts = [canonical_text(bok)]
    texts += [resealed(bok, BOK_PROSE[c]) for c in ("conclusion negated", "rho description")]
    texts += [resealed(bok, _key(1, "8.80135049394e-4")), resealed(bok, lambda d: d["budget"].update(note="x"))]
    texts += [resealed(bok, lambda d: d.update(precision=256))]  # designed: the kernel judges truth, not reproduction
    cold = []
    for text in texts:
        certify_kernel._MEMO.clear()
        cold.append(kernel_says(text))
    assert cold == [0, 4, 4, 4, 0, 0]
    for order in (texts, texts[::-1]):
        warm = [kernel_says(t) for t in order]
        assert warm == (cold if order is texts else cold[::-1])


#: a grid at which the quotient lo / h of the mixture's 0/add window is the integer -1557 exactly (h = |lo| / 1557, lo the
#: float loss range of this platform's libm): its floor is within any margin of the boundary
EDGE_GRID = "8765276221316761/876513077476982784"


@pytest.mark.slow  # about 2 CPU s: certify's producer and checker at the edge grid
def test_layout_margin_moves_only_an_index_at_its_boundary():
    """Documented (docs/reference/certificate.md, "Choices made with floats"): an index whose quotient is within the
    relative margin 1e-12 of its boundary may take either neighbouring value (another platform's libm may land there);
    every other index must be certify's own. Here lo of 0/add lies on its boundary: -1559 (the value at h (1 - 1e-12)) is
    accepted beside certify's -1558, while lo -1557, hi + 1 or core_lo - 1 are refused."""
    from certify.balls import exact
    from certify.events.pld_certificates import EPSILON_QUERY_DELTA, parse_inputs
    from certify.pld.certificates import LAYOUT_MARGIN
    from certify.pld.ledger import plan

    h = exact(EDGE_GRID)
    entries = parse_inputs({**json.loads(made(mixture(*A)))["inputs"], "grid": EDGE_GRID})[4]
    runs = [plan(entries, EPSILON_QUERY_DELTA, x).layouts["0/add"].to_json() for x in (h, h * (1 + LAYOUT_MARGIN), h * (1 - LAYOUT_MARGIN))]
    if [r["lo"] for r in runs] != [-1558, -1558, -1559]:
        pytest.skip(f"this platform's libm puts the window elsewhere: {runs}")
    doc = json.loads(certify_events_pld(ledger_of(mixture(*A), "add-remove"), epsilon="1", grid=EDGE_GRID).dumps())
    assert certify_says(canonical_text(doc)) == 0

    def moved(key, by):
        return forged(doc, witnesses=lambda w: w["layouts"]["0/add"].update({key: w["layouts"]["0/add"][key] + by}))

    assert certify_says(moved("lo", -1)) == 0
    for key, by in (("lo", 1), ("hi", 1), ("core_lo", -1), ("core_hi", -1)):
        assert certify_says(moved(key, by)) == 4, (key, by)


BOK_UNREAD = {
    "no points": lambda d: d["witnesses"].update(points=[]),
    "a point's rule step": lambda d: d["witnesses"]["points"][0].update(h="1/2"),
    "an empty budget": lambda d: d["witnesses"].update(budget={}),
}


@pytest.mark.slow  # about 1 CPU s: one kernel derivation per case
@pytest.mark.parametrize("case", sorted(BOK_UNREAD))
def test_kernel_refuses_bok_witnesses_certify_refuses(bok, case):
    """Fixed (certify_kernel/bok.py, read_points): the layout of witnesses.points and witnesses.budget is read; which
    well-formed rule certify chose is a designed disagreement (tests/test_kernel_bok.py, docs/kernel.md)."""
    text = resealed(bok, BOK_UNREAD[case])
    assert certify_says(text) == 4
    assert kernel_says(text) == 4, certify_kernel.check_text(text).message


# --------------------------------------------------------------------------------------------
# events/pld of TruncatedSubsampledGaussianDpEvent: the weight w = P(Bin(n, q) >= B) is derived from n, q, B
# --------------------------------------------------------------------------------------------
def tsg_event(n=20, q="1/5", b=5, z="1") -> dict:
    return {
        "class_name": "TruncatedSubsampledGaussianDpEvent",
        "dataset_size": n,
        "sampling_probability": q,
        "truncated_batch_size": b,
        "noise_multiplier": z,
    }


@pytest.fixture(scope="module")
def genuine_tsg() -> dict:
    return json.loads(made(tsg_event()))


def test_genuine_tsg_verifies(genuine_tsg):
    text = canonical_text(genuine_tsg)
    assert certify_says(text) == 0
    assert kernel_says(text) == 2  # not a kind the kernel covers: it says so, never accepts


N, Q, B, Z = (f"event[0].{k}" for k in ("dataset_size", "sampling_probability", "truncated_batch_size", "noise_multiplier"))

#: edits of the inputs the weight and the pair are derived from, the rest of the file left as it was (re-sealed)
TSG_EDITS = {
    "a larger batch (smaller w)": {B: "6"},
    "a smaller dataset (smaller w)": {N: "19"},
    "a smaller rate": {Q: "1/6"},
    "more noise": {Z: "2"},
    "B > n (w = 0: the untruncated pair)": {B: "21"},
    "n written 20.0": {N: "20.0"},
    "n written 2e1": {N: "2e1"},
    "B written 05": {B: "05"},
    "q unreduced 2/10": {Q: "2/10"},
    "a negative batch size": {B: "-5"},
    "a fractional dataset": {N: "41/2"},
    "a null event (q = 0)": {Q: "0"},
    "a non-private event (z = 0)": {Z: "0"},
    "replace-special": {"neighboring": "replace-special"},
    "replace-one": {"neighboring": "replace-one"},
    "a weight whose enclosure is refused (B at the mean of Bin(2^53, 1/2))": {N: str(2**53), Q: "1/2", B: str(2**52)},
}


@pytest.mark.parametrize("case", sorted(TSG_EDITS))
def test_tsg_edited_inputs_refused(genuine_tsg, case):
    edit = TSG_EDITS[case]
    assert certify_says(resealed(genuine_tsg, lambda d: d["inputs"].update(edit))) in (2, 4, 5)


@pytest.mark.parametrize("case", ["a larger batch (smaller w)", "a smaller rate"])
def test_tsg_rederived_for_other_inputs_is_what_certify_writes(genuine_tsg, case):
    """The forger re-running certify's evaluator on other inputs but keeping the recorded headline decimals (``bound``,
    ``lower``: witnesses, not re-derived) is refused; what verifies for those inputs is certify's own file, byte for byte."""
    edit = TSG_EDITS[case]
    text = forged(genuine_tsg, edit)
    n, q, b = int(edit.get(N, "20")), edit.get(Q, "1/5"), int(edit.get(B, "5"))
    own = made(tsg_event(n, q, b))
    assert text != own and certify_says(text) in (4, 5)
    assert certify_says(own) == 0
