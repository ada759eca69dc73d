"""Conformance of every certificate kind to the kind contract (ARCHITECTURE.md, "The kind contract").

Parametrised over ``verify.registered_kinds()``: a kind gets these tests by registering, and a kind
registered without an ``example`` fails here. For each kind, its example producer (small and fast) makes a
genuine certificate, then:

* ``certify verify`` accepts it (exit 0; a search that stopped early, exit 6, is not an acceptable example),
  also at 2x and 4x its recorded precision, and the registered evaluator reproduces it exactly;
* the schema is closed (unknown inputs, witnesses, entry keys rejected) and descriptions, the budget and
  the conclusions are re-derived (any edit rejected);
* it serialises byte-identically twice, and a load/dump round trip gives the same text;
* one edited upper-bound quantity (the headline bound lowered), re-sealed with a recomputed digest, is
  rejected (exit 4 or 5) with a message naming the quantity;
* a dropped claim, re-sealed, is rejected;
* the same file under an unknown kind, and the file truncated, exit 2;
* a bad input is reported under its certificate field (``inputs.<name>``), never as a command-line flag.

A toy kind (``x <= 1`` for an exact input ``x``), declared by a toy package added to the registry at test
time, passes the same checks: adding a kind is one package plus one registry line.
"""

from __future__ import annotations

import copy
import json
import re
import sys

import pytest

from certify import cli, registry, verify
from certify.balls import InputError, ball_from_json, ctx, fmpq, lower_decimal, upper_decimal
from certify.certificate import DIGITS, Certificate, digest_of, load

KINDS = verify.registered_kinds()


def _reseal(doc: dict) -> dict:
    doc["digest"] = digest_of(doc)
    return doc


def _verify_cli(tmp_path, text: str, name: str = "c.json") -> int:
    path = tmp_path / name
    path.write_text(text)
    return cli.main(["verify", str(path)])


_EXAMPLES: dict[str, str] = {}


def _example_text(kind: str) -> str:
    """The kind's example certificate (made once per kind per session)."""
    if kind not in _EXAMPLES:
        spec = verify.spec_for(kind)
        assert spec.example is not None, f"kind {kind} is registered without an example producer"
        cert = spec.example()
        assert isinstance(cert, Certificate), f"{kind}: the example must return a Certificate, got {type(cert)}"
        assert cert.kind == kind
        _EXAMPLES[kind] = cert.dumps()
        assert cert.dumps() == _EXAMPLES[kind], f"{kind}: two serialisations differ"
    return _EXAMPLES[kind]


def _headline_quantity(doc: dict) -> str:
    """An upper-bound quantity to forge: a declared upper bound, else the left side of the first conclusion's claim."""
    for name, q in doc["quantities"].items():
        if q.get("bound") == "upper":
            return name
    claim = doc["conclusions"][0]["claim"]
    lhs = next(c["lhs"] for c in doc["claims"] if c["name"] == claim)
    return lhs if lhs in doc["quantities"] else next(iter(doc["quantities"]))


def _lower(q: dict) -> None:
    """Lower a recorded ball below what it encloses, keeping the decimals its outward rounding (a careful forger)."""
    m, r = ball_from_json(q["ball"])
    mant, e = q["ball"]["mid"]
    unit = fmpq(2) ** e if e >= 0 else fmpq(1, 2 ** (-e))
    shift = int(abs(m) / (1000 * unit)) + int(2 * r / unit) + 1
    q["ball"]["mid"] = [str(int(mant) - shift), e]
    m2 = m - shift * unit
    q["lower"], q["upper"] = lower_decimal(m2 - r, DIGITS), upper_decimal(m2 + r, DIGITS)


# --------------------------------------------------------------------------------------------
# The checks (run on every registered kind, and on the toy kind)
# --------------------------------------------------------------------------------------------
def check_example_verifies(kind, tmp_path):
    text = _example_text(kind)
    rep = verify.verify_text(text)
    assert rep.exit_code == 0 and rep.ok, (kind, rep.problems)
    assert _verify_cli(tmp_path, text) == 0


def check_serialisation(kind):
    text = _example_text(kind)
    doc = json.loads(text)
    assert json.dumps(doc, indent=2, sort_keys=False) + "\n" == text
    assert doc["digest"] == digest_of(doc)
    assert all(isinstance(v, str) for v in doc["inputs"].values()), "inputs are exact text"


def check_edited_upper_bound_rejected(kind, tmp_path):
    doc = json.loads(_example_text(kind))
    name = _headline_quantity(doc)
    _lower(doc["quantities"][name])
    _reseal(doc)
    rep = verify.verify_document(copy.deepcopy(doc))
    assert rep.exit_code in (4, 5), (kind, name, rep.exit_code)
    assert any(name in p for p in rep.problems), (kind, name, rep.problems)
    assert _verify_cli(tmp_path, json.dumps(doc)) in (4, 5)


def check_dropped_claim_rejected(kind):
    doc = json.loads(_example_text(kind))
    dropped = doc["claims"].pop()
    rep = verify.verify_document(_reseal(doc))
    assert rep.exit_code in (4, 5), (kind, dropped["name"], rep.exit_code)
    assert not rep.ok


def check_unknown_kind_and_truncated_exit_2(kind, tmp_path, capsys):
    text = _example_text(kind)
    doc = json.loads(text)
    doc["kind"] = "nosuch/kind"
    assert _verify_cli(tmp_path, json.dumps(_reseal(doc)), "unknown.json") == 2
    assert "unknown kind" in capsys.readouterr().err
    assert _verify_cli(tmp_path, text[: len(text) // 2], "truncated.json") == 2
    assert "truncated" in capsys.readouterr().err


#: inputs that are descriptive text, not read by any theorem (e.g. where a Poisson schedule came from)
FREE_TEXT_INPUTS = ("source",)
_LABEL = re.compile(r"(?:hypothesis fails: input |rejected at \d+ bits: )([^:]+):")


def check_bad_input_names_the_field(kind):
    """Every recorded input, made unreadable or out of range, is reported under a certificate field (never a ``--flag``)."""
    doc = json.loads(_example_text(kind))
    for key in doc["inputs"]:
        for bad in ("not-a-number", "-1"):  # unreadable, and out of the range of almost every parameter
            d = copy.deepcopy(doc)
            d["inputs"][key] = bad
            rep = verify.verify_document(_reseal(d))
            if key not in FREE_TEXT_INPUTS and bad == "not-a-number":
                assert rep.exit_code in (4, 5), (kind, key)
            labels = [m.group(1) for p in rep.problems for m in [_LABEL.search(p)] if m]
            for label in labels:  # "inputs" (several fields at once), "inputs.<recorded name>", or a witness
                assert (
                    label == "inputs" or label.startswith("witnesses") or (label.startswith("inputs.") and label[len("inputs.") :] in doc["inputs"])
                ), (kind, key, bad, label)


def check_verifies_at_higher_precision(kind):
    """Accepted also when re-derived at 2x and 4x the recorded precision."""
    doc = json.loads(_example_text(kind))
    for factor in (2, 4):
        rep = verify.verify_document(copy.deepcopy(doc), factor * doc["precision"])
        assert rep.exit_code == 0 and rep.ok, (kind, factor, rep.problems)
        assert len(rep.conclusions) == len(doc["conclusions"])


def check_evaluator_reproduces_the_certificate(kind):
    """The registered evaluator, on the recorded inputs and witnesses at the recorded precision, gives back the
    recorded quantities, claims, conclusions and budget exactly (producer and checker share one function)."""
    doc = json.loads(_example_text(kind))
    with ctx.workprec(doc["precision"]):
        ev = verify.spec_for(kind).evaluator(copy.deepcopy(doc["inputs"]), copy.deepcopy(doc["witnesses"]))
    assert {k: q.to_json() for k, q in ev.quantities.items()} == doc["quantities"], kind
    assert [c.to_json() for c in ev.claims] == doc["claims"], kind
    assert [c.to_json() for c in ev.conclusions] == doc["conclusions"], kind
    assert list(ev.budget.to_json().items()) == list(doc["budget"].items()), kind  # same sources, same order
    assert doc["conclusions"] and all(c["holds"] for c in doc["conclusions"]), kind


def check_closed_schema(kind):
    """Unknown inputs, witnesses and entry keys are rejected (exit 4), naming them."""
    doc = json.loads(_example_text(kind))
    for edit, needle in (
        (lambda d: d["inputs"].__setitem__("note", "1"), "unknown input(s) note"),
        (lambda d: d["witnesses"].__setitem__("extra", 1), "extra"),
        (lambda d: next(iter(d["quantities"].values())).__setitem__("trusted", True), "trusted"),
        (lambda d: d["claims"][0].__setitem__("verified", True), "verified"),
        (lambda d: d["conclusions"][0].__setitem__("note", "x"), "note"),
    ):
        d = copy.deepcopy(doc)
        edit(d)
        rep = verify.verify_document(_reseal(d))
        assert rep.exit_code == 4 and needle in " ".join(rep.problems), (kind, needle, rep.problems)


def check_edited_description_budget_and_conclusions(kind):
    """Descriptions, the budget and the conclusions are re-derived: any edit is rejected (exit 4)."""
    doc = json.loads(_example_text(kind))
    name = next(iter(doc["quantities"]))
    key = next(iter(doc["budget"]), None)
    old = doc["conclusions"][0]["hypotheses"]
    edits = [
        (
            lambda d: d["quantities"][name].__setitem__("description", d["quantities"][name]["description"] + " (optimal)"),
            f"quantity {name}: description",
        ),
        (lambda d: d.__setitem__("conclusions", []), "conclusions: 0 recorded"),
        (lambda d: d["conclusions"][0].__setitem__("hypotheses", [] if old else [d["claims"][0]["name"]]), "hypotheses"),
        (lambda d: d["conclusions"][0].__setitem__("statement", "the release is (0, 0)-DP"), "statement"),
    ]
    if key is not None:
        edits.append((lambda d: d["budget"].__setitem__(key, "none"), "budget"))
    for edit, needle in edits:
        d = copy.deepcopy(doc)
        edit(d)
        rep = verify.verify_document(_reseal(d))
        assert rep.exit_code == 4 and needle in " ".join(rep.problems), (kind, needle, rep.problems)
    d = copy.deepcopy(doc)
    d.pop("conclusions")
    with pytest.raises(InputError, match="conclusions"):
        load(json.dumps(d))


ALL_CHECKS = (
    check_example_verifies,
    check_verifies_at_higher_precision,
    check_evaluator_reproduces_the_certificate,
    check_serialisation,
    check_edited_upper_bound_rejected,
    check_dropped_claim_rejected,
    check_closed_schema,
    check_edited_description_budget_and_conclusions,
    check_unknown_kind_and_truncated_exit_2,
    check_bad_input_names_the_field,
)


def _run_all(kind, tmp_path, capsys):
    for check in ALL_CHECKS:
        args = {"kind": kind, "tmp_path": tmp_path, "capsys": capsys}
        check(**{k: args[k] for k in check.__code__.co_varnames[: check.__code__.co_argcount]})


# --------------------------------------------------------------------------------------------
# Every registered kind
# --------------------------------------------------------------------------------------------
def test_registry_and_checker_agree():
    """Every kind the checker knows is declared by exactly one registry entry (hook KINDS), and conversely."""
    declared = registry.kind_modules()
    assert sorted(declared) == KINDS
    for kind, module in declared.items():
        assert verify.spec_for(kind).evaluator.__module__.startswith(module.rsplit(".", 1)[0]), kind


@pytest.mark.parametrize("kind", KINDS)
def test_kind_has_an_example(kind):
    assert verify.spec_for(kind).example is not None, f"{kind}: register(..., example=...) is required"


@pytest.mark.parametrize("kind", KINDS)
def test_example_verifies(kind, tmp_path):
    check_example_verifies(kind, tmp_path)


@pytest.mark.parametrize("kind", KINDS)
def test_verifies_at_higher_precision(kind):
    check_verifies_at_higher_precision(kind)


@pytest.mark.parametrize("kind", KINDS)
def test_evaluator_reproduces_the_certificate(kind):
    check_evaluator_reproduces_the_certificate(kind)


@pytest.mark.parametrize("kind", KINDS)
def test_closed_schema(kind):
    check_closed_schema(kind)


@pytest.mark.parametrize("kind", KINDS)
def test_edited_description_budget_and_conclusions(kind):
    check_edited_description_budget_and_conclusions(kind)


@pytest.mark.parametrize("kind", KINDS)
def test_serialisation_is_deterministic(kind):
    check_serialisation(kind)


@pytest.mark.parametrize("kind", KINDS)
def test_edited_upper_bound_rejected(kind, tmp_path):
    check_edited_upper_bound_rejected(kind, tmp_path)


@pytest.mark.parametrize("kind", KINDS)
def test_dropped_claim_rejected(kind):
    check_dropped_claim_rejected(kind)


@pytest.mark.parametrize("kind", KINDS)
def test_unknown_kind_and_truncated_file_exit_2(kind, tmp_path, capsys):
    check_unknown_kind_and_truncated_exit_2(kind, tmp_path, capsys)


@pytest.mark.parametrize("kind", KINDS)
def test_bad_input_names_the_certificate_field(kind):
    check_bad_input_names_the_field(kind)


# --------------------------------------------------------------------------------------------
# Field names: the CLI flag on the command line, the JSON field in `certify verify`
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kind,key,flag",
    [
        ("objpert/theorem-4.1", "mu", "--mu"),
        ("dpsgd/renyi-bok", "noise_multiplier", "--noise-multiplier"),
        ("dpsgd/renyi-bok", "sampling_rate", "--sampling-rate"),
        ("pld/dpsgd", "steps", "--steps"),
        ("referee/objpert-rdp", "alpha", "--alpha"),
    ],
)
def test_verify_names_the_json_field_not_the_flag(kind, key, flag):
    doc = json.loads(_example_text(kind))
    doc["inputs"][key] = "-1"
    rep = verify.verify_document(_reseal(doc))
    assert rep.exit_code == 5, rep.problems
    text = " ".join(rep.problems)
    assert f"inputs.{key}" in text and flag not in text, text


def test_field_name_mapping():
    spec = verify.KindSpec(lambda i, w: None, fields={"--noise-multiplier": "sigma"})
    inputs = {"sigma": "1", "mu": "1", "phase[0].steps": "3"}
    assert verify.field_name(spec, "--noise-multiplier", inputs) == "inputs.sigma"
    assert verify.field_name(spec, "--mu", inputs) == "inputs.mu"
    assert verify.field_name(spec, "phase[0].steps", inputs) == "inputs.phase[0].steps"
    assert verify.field_name(spec, "inputs", inputs) == "inputs"
    assert verify.field_name(spec, "--grid", inputs) == "--grid"  # not recorded: left as the validator said


def test_cli_still_names_the_flag(capsys):
    assert cli.main(["objpert-rdp", "--L", "1", "--nu", "2", "--s", "1/4", "--lambda", "1", "--alpha", "-1"]) == 2
    err = capsys.readouterr().err
    assert "--alpha" in err and "inputs." not in err


# --------------------------------------------------------------------------------------------
# A toy kind, added the way a new paper is: one package with hooks plus one registry line
# --------------------------------------------------------------------------------------------
TOY_KIND = "toy/x-at-most-1"

TOY_FILES = {
    "__init__.py": """
\"\"\"A toy paper: x <= 1 for an exact input x.\"\"\"
KEY = "toy"
COMMANDS = ("toy_paper.commands",)
KINDS = {"toy/x-at-most-1": "toy_paper.certificates"}
""",
    "certificates.py": """
from certify.balls import ball, exact, exact_str
from certify.certificate import Certificate, Evaluation
from certify.verify import register

KIND = "toy/x-at-most-1"


def validate(inputs):
    exact(inputs["x"], "--x")


def evaluate_x_at_most_1(inputs, witnesses):
    x = exact(inputs["x"], "--x")
    ev = Evaluation()
    ev.add("x", ball(x), "(toy)", "the input x")
    ev.claim("x_at_most_1", "x <= 1", "x", "<=", "1", "(toy)")
    ev.conclude("bounded", "x is at most 1", "x_at_most_1")
    return ev


def certify_x(x):
    inputs = {"x": exact_str(exact(x, "--x"))}
    return Certificate(KIND, inputs, evaluate_x_at_most_1(inputs, {}), {}, None, 128)


register(KIND, evaluate_x_at_most_1, validate, ("x",), (), example=lambda: certify_x("1/2"))
""",
    "commands.py": """
def register(sub):
    p = sub.add_parser("toy", help="certify that x <= 1 (a toy paper)")
    p.add_argument("--x", required=True)
    p.set_defaults(func=lambda args: 0)
""",
}


@pytest.fixture
def toy_entry(tmp_path, monkeypatch):
    """A toy paper: its own folder (hooks in ``__init__``, a certificates and a commands module) plus one registry line."""
    folder = tmp_path / "toy_paper"
    folder.mkdir()
    for name, text in TOY_FILES.items():
        (folder / name).write_text(text.lstrip())
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "ENTRIES", registry.ENTRIES + ("toy_paper",))
    yield
    for name in [m for m in sys.modules if m == "toy_paper" or m.startswith("toy_paper.")]:
        del sys.modules[name]
    verify.unregister(TOY_KIND)
    _EXAMPLES.pop(TOY_KIND, None)


def test_toy_kind_passes_the_suite(toy_entry, tmp_path, capsys):
    assert TOY_KIND not in verify._KINDS  # not imported yet: found through the registry
    assert TOY_KIND in verify.registered_kinds()
    assert "toy" in cli.build_parser().format_help()  # its command, from the same registry line
    _run_all(TOY_KIND, tmp_path, capsys)
    doc = json.loads(_example_text(TOY_KIND))
    doc["inputs"]["x"] = "2"  # a forger re-derives everything at x = 2
    ev = verify.spec_for(TOY_KIND).evaluator(doc["inputs"], {})
    doc["quantities"] = {k: q.to_json() for k, q in ev.quantities.items()}
    doc["claims"] = [c.to_json() for c in ev.claims]
    doc["conclusions"] = [c.to_json() for c in ev.conclusions]
    rep = verify.verify_document(_reseal(doc))
    assert rep.exit_code == 5 and "x is at most 1" in " ".join(rep.problems)


def test_toy_kind_is_gone_afterwards():
    assert TOY_KIND not in verify.registered_kinds()
