"""The checker's integer fast path (certify.verify, short balls) accepts exactly what the general path accepts.

For short recorded balls at the recorded precision, `_compare_quantities` checks containment and width in
Python integers (`_small_ball_proved`; the decimals by the package's one rounding routine). These tests compare
it with the general rule on random balls, and check that every edit of a genuine certificate's ball or
decimals is still rejected.
"""

import copy
import json
import random

import pytest

from certify.balls import arb, ctx, fmpq, lower_decimal, upper_decimal
from certify.certificate import DIGITS, digest_of
from certify.verify import _small_ball, _small_ball_proved, verify_document


def _q(x):
    m, e = x
    return fmpq(m) * fmpq(2) ** e if e >= 0 else fmpq(m, 2 ** (-e))


def test_small_ball_parse_is_stricter_than_the_general_one():
    good = {"mid": ["123", -4], "rad": ["1", -100]}
    assert _small_ball(good) == ((123, -4), (1, -100))
    for bad in (
        None,
        [],
        {"mid": ["123", -4]},
        {"mid": ["123", -4], "rad": ["1", -100], "x": 1},
        {"mid": ["123", True], "rad": ["1", -100]},
        {"mid": [123, -4], "rad": ["1", -100]},
        {"mid": ["12a", -4], "rad": ["1", -100]},
        {"mid": ["+12", -4], "rad": ["1", -100]},
        {"mid": ["123", -4], "rad": ["-1", -100]},
        {"mid": ["123", -4.0], "rad": ["1", -100]},
        {"mid": ["1" * 400, -4], "rad": ["1", -100]},
        {"mid": ["123", 10**6], "rad": ["1", -100]},
        {"mid": ("123", -4), "rad": ["1", -100]},
        {"mid": ["123", -4, 0], "rad": ["1", -100]},
        {"mid": [" 123", -4], "rad": ["1", -100]},
    ):
        assert _small_ball(bad) is None, bad


def _ball_json(b):
    mm, me = b.mid().man_exp()
    rm, re_ = b.rad().man_exp()
    return {"mid": [str(mm), int(me)], "rad": [str(rm), int(re_)]}


def test_small_ball_proved_matches_containment_width_and_decimals():
    rng = random.Random(5)
    with ctx.workprec(128):
        for _ in range(300):
            v = arb(rng.randint(-(10**12), 10**12)) / rng.randint(1, 10**9)
            v = v.log1p() if v > -1 else v
            rec = _ball_json(v)
            m, r = _q(_small_ball(rec)[0]), _q(_small_ball(rec)[1])
            entry = {"ball": rec, "lower": lower_decimal(m - r, DIGITS), "upper": upper_decimal(m + r, DIGITS)}
            assert _small_ball_proved(_small_ball(rec), v, 128, entry)
            # a recomputation outside the recorded ball, a recorded ball far too wide, edited decimals
            shifted = v + v.rad() * 4 + arb(2) ** -200
            assert not _small_ball_proved(_small_ball(rec), shifted, 128, entry)
            wide = {"mid": rec["mid"], "rad": [str(int(rec["rad"][0]) * 4 + 1), rec["rad"][1]]}
            wm, wr = _q(_small_ball(wide)[0]), _q(_small_ball(wide)[1])
            wide_entry = {"ball": wide, "lower": lower_decimal(wm - wr, DIGITS), "upper": upper_decimal(wm + wr, DIGITS)}
            ok_general = wr <= 2 * v.rad().fmpq() + abs(wm) * fmpq(1, 2**124)
            assert _small_ball_proved(_small_ball(wide), v, 128, wide_entry) is ok_general
            for key in ("lower", "upper"):
                edited = dict(entry)
                edited[key] = "0"
                assert not _small_ball_proved(_small_ball(rec), v, 128, edited)


def _poisson_doc():
    from certify.poisson.accountant import certify_poisson
    from certify.poisson.schedule import parse_schedule

    sch = parse_schedule([{"sampling_rate": "1/100", "noise_multiplier": "11/10", "steps": 1000}])
    return json.loads(certify_poisson(sch, "1e-5").dumps())


def _reseal(doc):
    doc["digest"] = digest_of(doc)
    return doc


def test_edited_balls_and_decimals_are_rejected_on_the_fast_path():
    doc = _poisson_doc()
    assert verify_document(copy.deepcopy(doc)).exit_code == 0
    for name in doc["quantities"]:
        q = doc["quantities"][name]
        for key, value in (
            ("lower", "0"),
            ("upper", "1e9"),
            ("upper", q["lower"]),
            ("ball", {"mid": [str(int(q["ball"]["mid"][0]) + 2**90), q["ball"]["mid"][1]], "rad": q["ball"]["rad"]}),
            ("ball", {"mid": q["ball"]["mid"], "rad": ["0", 0]}),
            ("ball", {"mid": q["ball"]["mid"], "rad": [str(2**200), 0]}),
            ("ball", {"mid": q["ball"]["mid"], "rad": ["-1", 0]}),
        ):
            if q.get(key) == value:
                continue  # not an edit (alpha is exact: its lower and upper are equal)
            d = copy.deepcopy(doc)
            d["quantities"][name][key] = value
            rep = verify_document(_reseal(d))
            assert rep.exit_code == 4, (name, key, value, rep.problems)
            assert any(name in p for p in rep.problems)


def test_canonical_form_is_json_dumps_character_for_character():
    from certify.certificate import canonical

    doc = _poisson_doc()
    objs = [doc, "a", 1, None, 2.5, float("nan"), [1, {"b": "é\u2028", "a": [True, None]}], {"x": {"z": 1, "y": [{}, []]}}, {1: "int key"}]
    for o in objs:
        assert canonical(o) == json.dumps(o, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    for bad in ({"a": object()}, {("t",): 1}, {"a": 1, 2: 3}):
        with pytest.raises(TypeError):
            canonical(bad)
        with pytest.raises(TypeError):
            json.dumps(bad, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
