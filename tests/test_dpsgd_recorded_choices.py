"""What a DP-SGD branch-and-bound witness records that any value would keep sound, and how the checker holds it to
certify's own choice (docs/reference/certificate.md, "Choices the checker re-derives"):

* the search budget (``witnesses.budget``): the producer's own check of --max-evaluations / --max-seconds
  (:func:`certify.dpsgd.search.search_limits`, one helper) is applied to the recorded one;
* the curvature thetas of (42') (``witnesses.curvature[i].thetas``): re-derived with the producer's
  :func:`certify.dpsgd.curvature.theta_choice` and demanded equal. Floats choose them; the rounding of a quantised
  logit to a theta numerator is shown here to survive any libm within 56 ulps of exp, for every logit the rule can
  produce (an exhaustive check against mpmath at 50 digits);
* the curvature level (``witnesses.curvature[i].level``): re-derived with the producer's
  :func:`certify.dpsgd.curvature.choose_levels` (the first of crude, kneg, convex, full whose key (37) is <= U, the
  largest key at level full) and demanded equal: a sharper or a cheaper level than certify's is refused.
"""

from __future__ import annotations

import copy
import json
import os
import sys

import mpmath
import numpy as np
import pytest

from certify.balls import InputError, exact, fmpq, upper_decimal
from certify.dpsgd import certificates, search
from certify.dpsgd.accountant import certify_rho, clear_memo
from certify.dpsgd.curvature import LEVELS, THETA_BITS, theta_choice
from certify.dpsgd.problem import Problem
from certify.dpsgd.search import SearchLimits
from certify.verify import verify_text

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_forger import _evaluate_rederiving_reports, reseal  # noqa: E402
from test_forger21 import canonical_text  # noqa: E402
from test_forger_events import certify_says, forged  # noqa: E402

PROB = Problem(8, fmpq(1, 100), fmpq(2))  # a branch-and-bound of 4 leaves (levels convex, kneg, kneg, kneg)


def rho_bok(limits: SearchLimits) -> dict:
    """The rho-bok certificate certify writes for PROB under ``limits`` (as --max-evaluations / --max-seconds set them)."""
    clear_memo()
    try:
        with search.budget(limits):
            return json.loads(certify_rho(PROB).certificate.dumps())
    finally:
        clear_memo()


@pytest.fixture(scope="module")
def genuine() -> dict:
    doc = rho_bok(SearchLimits())
    assert doc["witnesses"]["method"] == "branch-and-bound" and len(doc["witnesses"]["leaves"]) == 4
    return doc


# --------------------------------------------------------------------------------------------
# The budget: one check for the flags and the recorded fields
# --------------------------------------------------------------------------------------------
def test_budget_at_the_cap_is_what_certify_writes(genuine):
    """Control: the largest evaluation budget certify runs with (the cap bb_evaluations, 20,000) and a time limit the
    search never meets verify; the file is byte for byte the one certify writes with those flags."""
    doc = rho_bok(SearchLimits(20_000, fmpq(7201, 2)))
    edited = copy.deepcopy(genuine)
    edited["witnesses"]["budget"].update(max_evaluations="20000", max_seconds="7201/2")
    text = canonical_text(reseal(edited))
    assert text == canonical_text(doc)
    assert certify_says(text) == 0


@pytest.mark.parametrize("n, t", [("20001", "60"), ("1", "60"), ("0", "60"), ("2000", "0"), ("2000", "-1/2")])
def test_budget_certify_refuses_to_run_is_refused(genuine, n, t):
    """Each budget the producer refuses (search.budget, through search_limits) is refused when recorded (exit 4);
    the old reader checked the spelling only and accepted them (bar max_evaluations below the 5 leaf endpoints)."""
    with pytest.raises(InputError):
        with search.budget(SearchLimits(int(n), exact(t))):
            pass
    edited = copy.deepcopy(genuine)
    edited["witnesses"]["budget"].update(max_evaluations=n, max_seconds=t)
    assert certify_says(canonical_text(reseal(edited))) == 4


# --------------------------------------------------------------------------------------------
# The curvature thetas
# --------------------------------------------------------------------------------------------
def rekeyed(doc: dict, i: int, entry: dict, monkeypatch, stopped: bool = False) -> str:
    """The forger's file: leaf i's curvature entry replaced by ``entry`` and its key (37) recomputed by certify's own
    evaluator, then regenerated as certify writes it (:func:`test_forger_events.forged`: headline, quantities, digest),
    with the evaluator's checks of the recorded key, thetas and level switched off for those runs (and only them).
    ``stopped``: the witness also says the search stopped early at its resolution (for a key that puts the gap above
    gamma, as the checker re-derives it)."""

    def stop(witnesses):
        if stopped:
            witnesses["stopped_early"] = True
            witnesses["budget"]["stopped_by"] = "resolution"

    w = copy.deepcopy(doc["witnesses"])
    w["curvature"][i] = entry
    stop(w)
    with monkeypatch.context() as m:
        m.setattr(certificates, "check_leaf_key", lambda *a: None)
        m.setattr(certificates, "check_thetas", lambda *a: None)
        m.setattr(certificates, "check_levels", lambda *a: None)
        # (a reported rho left as it was is re-derived, as a forger with certify's code does)
        ev = _evaluate_rederiving_reports({**doc, "witnesses": w}, doc["witnesses"])
        key = upper_decimal(ev.quantities[f"leaf[{i}]"].value.upper().fmpq(), certificates.KEY_DIGITS)

        def edit(witnesses):
            witnesses["curvature"][i] = entry
            witnesses["leaves"][i][2] = key
            stop(witnesses)

        return forged(doc, witnesses=edit)


def test_thetas_of_the_theta_0_branch_refused_with_their_key(genuine, monkeypatch):
    """Every theta_k = 0 on leaf 1 (the D >= 1 - p branch of (42): a valid, looser bound) with the key that gives:
    a consistent file certify never writes. The old checker re-derived it and accepted it (exit 0)."""
    entry = {"level": genuine["witnesses"]["curvature"][1]["level"], "thetas": [0] * len(genuine["witnesses"]["curvature"][1]["thetas"])}
    text = rekeyed(genuine, 1, entry, monkeypatch)
    assert json.loads(text)["witnesses"]["leaves"][1][2] != genuine["witnesses"]["leaves"][1][2]  # the key moved with them
    assert certify_says(text) == 4


def test_one_theta_moved_by_one_unit_refused(genuine):
    """One numerator moved by 2^-40: refused (the old checker refused it too, by the leaf's ball, which moved in its last
    digits), now before any ball is computed, naming the leaf and the index."""
    edited = copy.deepcopy(genuine)
    edited["witnesses"]["curvature"][2]["thetas"][3] += 1
    text = canonical_text(reseal(edited))
    assert certify_says(text) == 4
    with pytest.raises(InputError, match=r"theta numerator 3"):
        certificates.evaluate_rho_bok(edited["inputs"], edited["witnesses"])


def _level_edit(doc: dict, i: int, level: str, monkeypatch, stopped: bool = False) -> str:
    """Leaf i recorded at ``level`` with that level's own thetas (theta_choice: the ones certify would record there) and
    the key they give: a self-consistent file (headline, quantities, digest regenerated) that differs from certify's
    in the level of leaf i (and, with ``stopped``, in saying the search stopped early)."""
    l, r = (exact(x) for x in doc["witnesses"]["leaves"][i][:2])
    entry = {"level": level, "thetas": list(theta_choice(PROB, l, r, level))}
    return rekeyed(doc, i, entry, monkeypatch, stopped)


def _refused_naming(text: str, level: str, want: str) -> None:
    """Refused (exit 4) naming both levels; also at a higher --precision, where the rule is not applied (keys move with
    precision) but the re-derivation at the recorded precision, which verify always runs, refuses it."""
    assert certify_says(text) == 4
    rep = verify_text(text, precision=256)
    assert rep.exit_code == 4 and any("curvature[" in p and f"recorded level {level}" in p for p in rep.problems)
    doc = json.loads(text)
    with pytest.raises(InputError, match=rf"recorded level {level}, certify chooses {want} \(curvature.choose_levels"):
        certificates.evaluate_rho_bok(doc["inputs"], doc["witnesses"])


@pytest.mark.parametrize("i, level", [(1, "convex"), (1, "full"), (0, "full")])
def test_a_sharper_level_with_its_thetas_refused(genuine, monkeypatch, i, level):
    """A sharper level than certify's on leaf i (a valid, tighter bound) with its own thetas and key: a file certify never
    writes. The old checker checked the level to be one of LEVELS only and accepted it (exit 0); the level is now
    re-derived (curvature.choose_levels) and the file refused (exit 4), naming the recorded and the re-derived level."""
    got = genuine["witnesses"]["curvature"][i]["level"]
    assert tuple(LEVELS).index(level) > tuple(LEVELS).index(got)
    _refused_naming(_level_edit(genuine, i, level, monkeypatch), level, got)


@pytest.mark.parametrize("i, level", [(0, "crude"), (0, "kneg"), (1, "crude")])
def test_a_cheaper_level_with_its_thetas_refused(genuine, monkeypatch, i, level):
    """A cheaper level than certify's on leaf i with its own thetas and the (larger) key they give, the headline
    re-derived from it: refused (exit 4), naming both levels. Certify takes the first level whose key is <= U, so
    every cheaper one has a key above U: the forged leaf's key exceeds the genuine one, and here the gap then exceeds
    gamma, so the forger also records a search stopped early at its resolution (a consistent, looser bound, which
    the old checker accepted)."""
    got = genuine["witnesses"]["curvature"][i]["level"]
    assert tuple(LEVELS).index(level) < tuple(LEVELS).index(got)
    text = _level_edit(genuine, i, level, monkeypatch, stopped=True)
    doc = json.loads(text)
    assert exact(doc["witnesses"]["leaves"][i][2]) > max(exact(leaf[2]) for leaf in genuine["witnesses"]["leaves"])
    assert doc["quantities"]["rho"] != genuine["quantities"]["rho"]  # the headline moved with it
    _refused_naming(text, level, got)


def test_the_levels_certify_writes_are_the_first_below_the_largest_full_key(genuine):
    """Control for the two tests above: every leaf at its recorded level has a key <= the largest recorded key, and the
    largest recorded key is the largest key at level "full" (the rule gives the bound of "full" everywhere)."""
    from certify.dpsgd.curvature import choose_levels, interval_key, kappa_neg
    from certify.dpsgd.mixture import point_bounds

    w = genuine["witnesses"]
    res = certificates.witness_from_json(w)
    hi = {u: point_bounds(PROB, u, res.rules.get(u)).J_hi.upper().fmpq() for leaf in res.leaves for u in leaf}
    U, levels = choose_levels(PROB, res.leaves, hi)
    assert levels == [c["level"] for c in w["curvature"]] == ["convex", "kneg", "kneg", "kneg"]
    full = [interval_key(hi[l], hi[r], kappa_neg(PROB, l, r).upper().fmpq(), l, r) for l, r in res.leaves]
    assert max(full) == U
    assert max(exact(leaf[2]) for leaf in w["leaves"]) == exact(upper_decimal(U, certificates.KEY_DIGITS))


def test_theta_rounding_survives_libm():
    """The float decision of theta_choice most exposed to another libm: theta = round(2^40 / (1 + exp(-t))) / 2^40 with the
    logit t quantised to a multiple of 1/16 in [-60, 60] (curvature._theta_choice). For each of the 1921 logits the float
    numerator is the nearest integer to the exact value (mpmath, 50 digits), and stays so when exp(-t) is moved by up to
    56 ulps either way (the division and the addition are IEEE-exact): a platform's exp changes no theta here."""
    assert THETA_BITS == 40
    k = np.arange(-960, 961)
    t = k / 16.0
    scale = float(2**THETA_BITS)
    with np.errstate(over="ignore"):
        e = np.exp(-t)
        base = np.round(scale / (1.0 + e))
        mpmath.mp.dps = 50
        exact_nearest = [int(mpmath.nint(mpmath.mpf(2) ** THETA_BITS / (1 + mpmath.exp(-mpmath.mpf(int(j)) / 16)))) for j in k]
        assert base.astype(np.int64).tolist() == exact_nearest
        for direction in (np.inf, -np.inf):
            moved = e.copy()
            for _ in range(56):
                moved = np.nextafter(moved, direction)
            assert (np.round(scale / (1.0 + moved)) == base).all()
