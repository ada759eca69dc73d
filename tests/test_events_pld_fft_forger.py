"""A forger's attack on events/pld certificates composed by the FFT (issue 24; witness ``fft`` = {direction: FftPlan}).

Genuine certificates (grid 1e-2, each verify well under 2 s): Laplace x 6 + PoissonSampled Gaussian x 12 + Gaussian
under add/remove (two directions, target_delta and target_epsilon), DiscreteLaplace x 30 (symmetric: one direction),
Laplace x 2000 and PoissonSampled Gaussian x 2000 (the default composition), RandomizedResponse x 1000 and
EpsilonDelta x 1500 + RandomizedResponse x 30 + Gaussian under replace-one. Every field a reader sees is edited and
re-sealed (:func:`certify.certificate.digest_of`): the plan's keys and values (JSON types, huge, negative, N not a
power of two, N = 2^40, j1 < j0, lam = 0, threshold 1, other spellings, extra and missing keys, the old key
``offset``), the plan's directions, fft with chain, fft on a one-event ledger, lower_directions, the read-off points,
bound / lower, statements, equations, descriptions, the budget; inputs edited with every plan witness re-derived for
them as the checker derives it (the consistent forger). ``certify verify`` must refuse each (exit 4, or 2 for a
file that is not a certificate), without a traceback, naming the field where the checker names one.

Found by this suite and fixed (2026-12-03), a crash: a ledger of bounded-loss pairs whose largest composed loss still
carries more than the target delta (Laplace x 2 or x 10, RandomizedResponse / EpsilonDelta / DiscreteLaplace x 2 by
``--composition fft``; RandomizedResponse at noise 1e-6 x 1000 by the DEFAULT composition) drove the FFT's tilt to its
cap and ``math.ldexp`` overflowed: ``certify account`` ended with a traceback (exit 1). certify.pld.ledger now turns a
float overflow of the FFT plan or tilt into UndecidedError at the producer (the default composition falls back to the
exact products; ``--composition fft`` ends with exit 3, "undecided") and into a refusal naming ``witnesses.fft`` at the
checker (a forger who records the plan certify derives for such a ledger; before: "malformed inputs", exit 4).

Not a hole (asserted below): an FFT certificate's witnesses without ``fft``, every text re-rendered from the exact
products, verify exactly when the exact products' searches leave the same read-off points; with ``chain`` it is then
byte for byte the certificate ``--composition exact`` writes, and every number was re-derived by the exact products.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace
import json
import time

import pytest
from flint import fmpq

from certify import cli, verify
from certify.balls import InputError, UndecidedError, workprec
from certify.certificate import digest_of, dumps_document, render_document
from certify.events.ledger import ledger_of
from certify.events.pld_certificates import certify_events_pld, evaluate_events_pld, parse_inputs, plan_delta
from certify.pld import fft, ledger
from test_pld_fft_forger import cli_verify_exits
from pld_event_helpers import composed, gauss, laplace, poisson_gauss, selfc

SMALL = composed(selfc(laplace("20"), 6), selfc(poisson_gauss("1/10", "2"), 12), gauss("4"))
RR = {"class_name": "RandomizedResponseDpEvent", "noise_parameter": "1/2", "num_buckets": 4}
ED = {"class_name": "EpsilonDeltaDpEvent", "epsilon": "1/100", "delta": "0"}
DL = {"class_name": "DiscreteLaplaceDpEvent", "noise_parameter": "1/2", "sensitivity": 2}

CASES = {
    "small": (SMALL, "add-remove", {"delta": "1e-6", "composition": "fft"}),
    "small_eps": (SMALL, "add-remove", {"epsilon": "1", "composition": "fft"}),
    "dl": (selfc(DL, 30), "add-remove", {"delta": "1e-6", "composition": "fft"}),
    "lap2000": (selfc(laplace("200"), 2000), "add-remove", {"delta": "1e-6"}),
    "pg2000": (selfc(poisson_gauss("1/100", "2"), 2000), "add-remove", {"delta": "1e-6"}),
    "rr1000": (selfc(RR, 1000), "replace-one", {"delta": "1e-6"}),
    "ed_rr": (composed(selfc(ED, 1500), selfc(RR, 30), gauss("3")), "replace-one", {"delta": "1e-6"}),
}


@pytest.fixture(scope="module")
def certs() -> dict:
    out = {}
    for name, (event, relation, kw) in CASES.items():
        out[name] = json.loads(certify_events_pld(ledger_of(event, relation), grid="1e-2", **kw).dumps())
    return out


def _w(d):
    return d["witnesses"]


def _plan(d, direction="remove"):
    return d["witnesses"]["fft"][direction]


def _report(doc):
    """verify_document's report; a file refused by the work model before any evaluation (InputError, exit 2 in
    ``certify verify``: limits.check_work) as a report with exit code 2 naming the field."""
    doc["digest"] = digest_of(doc)
    t = time.perf_counter()
    try:
        rep = verify.verify_document(doc, doc["precision"])
    except InputError as err:
        rep = SimpleNamespace(exit_code=2, ok=False, problems=[f"{err.parameter}: {err.message}"])
    assert time.perf_counter() - t < 30  # refused by shape or by the re-run, never computed with at length
    return rep


def _refused(doc, needle=None):
    rep = _report(doc)
    assert rep.exit_code != 0 and not rep.ok, rep.problems
    assert rep.exit_code in (2, 4), (rep.exit_code, rep.problems)
    if needle is not None:
        assert any(needle in p for p in rep.problems), (needle, rep.problems)
    return rep


# -- the genuine certificates ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(CASES))
def test_genuine_fft_certificates_verify(certs, name):
    doc = certs[name]
    assert "fft" in _w(doc) and "chain" not in _w(doc)
    dirs = {"small": {"remove", "add"}, "small_eps": {"remove", "add"}, "pg2000": {"remove", "add"}}.get(name, {"remove"})
    assert set(_w(doc)["fft"]) == dirs
    assert doc["budget"]["fft_points"] == {d: str(p["N"]) for d, p in _w(doc)["fft"].items()}
    for factor in (1, 2):
        rep = verify.verify_document(copy.deepcopy(doc), factor * doc["precision"])
        assert rep.exit_code == 0 and rep.ok, rep.problems
    assert verify.verify_text(dumps_document(doc)).exit_code == 0


# -- the plan's values and keys -------------------------------------------------------------------------------------------
PLAN_EDITS = [
    ("N", 2**40), ("N", 3), ("N", 1000), ("N", -4), ("N", 0), ("N", 2**22), ("N", 2), ("N", 1024.0), ("N", "2048"), ("N", True),
    ("N", 10**5000), ("T", 18), ("T", 20), ("T", 2**64 + 1), ("T", -(2**64)), ("T", None), ("base", "0"), ("base", 0), ("a", 1.0),
    ("a", -(2**63)), ("j0", 10**9), ("j0", -1), ("j1", -5), ("j1", 0), ("j1", 1), ("lam", "0"), ("lam", "1/0"), ("lam", "0/1"),
    ("lam", "-13059317/1048576"), ("lam", "13059317/1048576.0"), ("lam", "26118634/2097152"), ("lam", " 13059317/1048576"),
    ("lam", "1e-3"), ("lam", "inf"), ("lam", "nan"), ("lam", True), ("lam", 12.45), ("lam", "9" * 401), ("lam", "1/" + "7" * 399),
    ("lam", ["13059317", 20]), ("threshold", "1"), ("threshold", "1/1"), ("threshold", "1/16"), ("threshold", "-0"),
    ("h", "1/100 "), ("h", "2/200"), ("h", "0.01"), ("h", "1/1000"), ("s_top", "0"), ("s_alias_lo", "-1"), ("s_alias_lo", "1023"),
    ("s_alias_hi", "1/3"), ("s_alias_hi", {}),
]  # fmt: skip


def test_the_edits_start_from_the_genuine_plan(certs):
    p = _plan(certs["small"])
    assert (p["T"], p["N"], p["lam"], p["threshold"], p["s_alias_lo"], p["j1"]) == (19, 2048, "13059317/1048576", "0", "1024", 2048)


@pytest.mark.parametrize("key,value", PLAN_EDITS, ids=[f"{k}={str(v)[:24]}" for k, v in PLAN_EDITS])
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_plan_value_forged(certs, key, value, direction):
    doc = copy.deepcopy(certs["small"])
    if _plan(doc, direction)[key] == value:
        return  # (the add plan may hold this value: nothing forged)
    _plan(doc, direction)[key] = value
    _refused(doc, f"witnesses.fft.{direction}")


def _rename(old, new):
    def f(d):
        for p in _w(d)["fft"].values():
            p[new] = p.pop(old)

    return f


STRUCTURE = [
    ("the old key offset for base", "small", _rename("base", "offset"), "witnesses.fft."),
    ("an extra key offset", "small", lambda d: _plan(d).update(offset=_plan(d)["base"]), "witnesses.fft.remove"),
    ("a key missing", "small", lambda d: _plan(d, "add").pop("s_top"), "witnesses.fft.add"),
    ("a key respelt BASE", "dl", _rename("base", "BASE"), "witnesses.fft.remove"),
    ("a plan for direction max", "small", lambda d: _w(d)["fft"].update(max=copy.deepcopy(_plan(d))), "witnesses.fft"),
    ("the add plan dropped", "small", lambda d: _w(d)["fft"].pop("add"), "witnesses.fft"),
    ("an add plan on a symmetric ledger", "dl", lambda d: _w(d)["fft"].update(add=copy.deepcopy(_plan(d))), "witnesses.fft"),
    ("the remove plan renamed add (symmetric)", "dl", lambda d: _w(d).update(fft={"add": _plan(d)}), "witnesses.fft"),
    ("the plan under the direction name 0/remove", "dl", lambda d: _w(d).update(fft={"0/remove": _plan(d)}), "witnesses.fft"),
    ("the plans swapped", "small", lambda d: _w(d).update(fft={"remove": _plan(d, "add"), "add": _plan(d, "remove")}), "witnesses.fft.remove"),
    ("the plan of pg2000 moved to lap2000", "lap2000", None, "witnesses.fft.remove"),
    ("fft {}", "small", lambda d: _w(d).update(fft={}), "witnesses.fft"),
    ("fft []", "small", lambda d: _w(d).update(fft=[]), "witnesses.fft"),
    ("fft null", "small", lambda d: _w(d).update(fft=None), "witnesses.fft"),
    ("fft a list of plans", "small", lambda d: _w(d).update(fft=[_plan(d), _plan(d, "add")]), "witnesses.fft"),
    ("fft a plan as a string", "dl", lambda d: _w(d).update(fft={"remove": json.dumps(_plan(d))}), "witnesses.fft.remove"),
    ("fft with the chain", "small", lambda d: _w(d).update(chain="left-to-right"), "witnesses.chain"),
    ("fft with another chain", "lap2000", lambda d: _w(d).update(chain="right-to-left"), "witnesses.chain"),
    ("fft with add_from", "small", lambda d: _w(d).update(add_from="remove"), "witnesses"),
    ("an unknown witness", "small", lambda d: _w(d).update(fft_plan=_w(d)["fft"]), "witnesses"),
    ("K 2^70", "small", lambda d: _w(d).update(K=2**70), "witnesses.K"),
    ("K one more", "small", lambda d: _w(d).update(K=_w(d)["K"] + 1), None),
    ("tau a JSON integer", "small", lambda d: _w(d).update(tau=int(_w(d)["tau"])), "witnesses"),
]


@pytest.mark.parametrize("name,base,forge,needle", STRUCTURE, ids=[c[0] for c in STRUCTURE])
def test_plan_structure_forged(certs, name, base, forge, needle):
    doc = copy.deepcopy(certs[base])
    if forge is None:
        _w(doc)["fft"] = {"remove": copy.deepcopy(_plan(certs["pg2000"]))}
    else:
        forge(doc)
    _refused(doc, needle)


def test_old_offset_key_of_a_pld_dpsgd_certificate_refused_cleanly():
    """A pld/dpsgd FFT certificate written before ``offset`` became ``base``: refused with exit 4 naming the plan."""
    from certify.contract import POISSON_ADD_REMOVE
    from certify.pld import certify_pld

    doc = json.loads(certify_pld(POISSON_ADD_REMOVE, "1/100", "2", 100, "1e-6", "1e-2", method="fft").dumps())
    _rename("base", "offset")(doc)
    rep = _refused(doc, "witnesses.fft.")
    assert rep.exit_code == 4 and any("base" in p and "offset" in p for p in rep.problems), rep.problems


# -- the read-off points, the lower direction, the decimals, the texts, the budget -----------------------------------------
def _q(r):
    return str(fmpq(*map(int, r.split("/"))) if "/" in r else fmpq(int(r)))


def _shift(key, k):
    def f(d):
        x = _w(d)[key]
        v = fmpq(*map(int, x.split("/"))) if "/" in x else fmpq(int(x))
        _w(d)[key] = str(v + fmpq(k, 2**24))

    return f


def _privacy(d):
    return next(c for c in d["claims"] if c["name"] == "privacy")


FFT_WORDS = ", composed by a tilted float FFT with a proven error bound"
EXACT_WIDTH = "one-step discretisation (connect-the-dots vs tangents) + 2^-K rounding + truncation (<= tau per product) + bisection 2^-24"
EXACT_EQUATION = "readoff: pessimistic products"
EXACT_LOWER = "the same read-off of the composed optimistic measures (worst direction)"


def _drop_fft_words(d):
    _privacy(d)["statement"] = _privacy(d)["statement"].replace(FFT_WORDS, "")


def _smaller_epsilon(d):
    c = d["conclusions"][0]
    c["statement"] = c["statement"].replace(_w(d)["epsilon_upper"], "1")


def _points(f):
    def g(d):
        d["budget"]["fft_points"] = {k: f(v) for k, v in d["budget"]["fft_points"].items()}

    return g


READOFF = [
    ("epsilon_upper one step up", "small", _shift("epsilon_upper", 1), "epsilon_upper"),
    ("epsilon_upper one step down", "small", _shift("epsilon_upper", -1), None),
    ("epsilon_upper huge", "small", lambda d: _w(d).update(epsilon_upper=str(10**7)), "witnesses"),
    ("epsilon_upper a JSON integer", "small", lambda d: _w(d).update(epsilon_upper=3), "witnesses.epsilon_upper"),
    ("epsilon_lower 0", "small", lambda d: _w(d).update(epsilon_lower="0"), "epsilon_lower"),
    ("epsilon_lower one step up", "small", _shift("epsilon_lower", 1), "epsilon_lower"),
    ("epsilon_lower = epsilon_upper", "small", lambda d: _w(d).update(epsilon_lower=_w(d)["epsilon_upper"]), "epsilon_lower"),
    ("epsilon_lower > epsilon_upper", "dl", _shift("epsilon_lower", 2**30), "witnesses"),
    ("epsilon_upper on an epsilon query", "small_eps", lambda d: _w(d).update(epsilon_upper="1"), "witnesses"),
    ("lower_directions add", "small", lambda d: _w(d).update(lower_directions=["add"]), "witnesses.lower_directions"),
    ("lower_directions both", "small", lambda d: _w(d).update(lower_directions=["remove", "add"]), "witnesses.lower_directions"),
    ("lower_directions twice", "small", lambda d: _w(d).update(lower_directions=["remove", "remove"]), "witnesses.lower_directions"),
    ("lower_directions []", "small", lambda d: _w(d).update(lower_directions=[]), "witnesses.lower_directions"),
    ("lower_directions a string", "small", lambda d: _w(d).update(lower_directions="remove"), "witnesses.lower_directions"),
    ("lower_directions add (symmetric)", "dl", lambda d: _w(d).update(lower_directions=["add"]), "witnesses.lower_directions"),
    ("lower_directions [null]", "rr1000", lambda d: _w(d).update(lower_directions=[None]), "witnesses.lower_directions"),
    ("bound 1", "small_eps", lambda d: _w(d).update(bound="1"), "bound and lower"),
    ("bound a float", "small_eps", lambda d: _w(d).update(bound=float(_w(d)["bound"])), "bound"),
    ("bound one digit lower", "small_eps", lambda d: _w(d).update(bound=_w(d)["bound"].replace("3.057544704", "3.057544703")), "bound and lower"),
    ("bound as a fraction", "small_eps", lambda d: _w(d).update(bound="3057544704/10000000000000"), None),
    ("lower 0", "small_eps", lambda d: _w(d).update(lower="0"), "bound and lower"),
    ("lower raised", "small_eps", lambda d: _w(d).update(lower=_w(d)["bound"]), "bound and lower"),
    ("lower null", "small_eps", lambda d: _w(d).update(lower=None), "lower"),
    ("statement without the FFT words", "small", _drop_fft_words, "privacy"),
    ("statement with a smaller epsilon", "small", _smaller_epsilon, None),
    ("equation of the exact products", "small", lambda d: d["quantities"]["delta_upper"].update(equation=EXACT_EQUATION), "delta_upper"),
    ("description of the exact products", "dl", lambda d: d["quantities"]["delta_lower"].update(description=EXACT_LOWER), "delta_lower"),
    ("budget fft_points as integers", "small", _points(int), "fft_points"),
    ("budget fft_points halved", "dl", _points(lambda v: str(int(v) // 2)), "fft_points"),
    ("budget composed_atoms for fft_points", "small", lambda d: d["budget"].update(composed_atoms=d["budget"].pop("fft_points")), "budget"),
    ("budget fft_points dropped", "lap2000", lambda d: d["budget"].pop("fft_points"), "fft_points"),
    ("budget fft_points of a direction that does not exist", "dl", lambda d: d["budget"]["fft_points"].update(add="1024"), "fft_points"),
    ("budget width of the exact products", "small", lambda d: d["budget"].update(width=EXACT_WIDTH), "width"),
]  # fmt: skip


@pytest.mark.parametrize("name,base,forge,needle", READOFF, ids=[c[0] for c in READOFF])
def test_readoff_texts_and_budget_forged(certs, name, base, forge, needle):
    doc = copy.deepcopy(certs[base])
    before = copy.deepcopy(doc)
    forge(doc)
    assert doc != before
    _refused(doc, needle)


# -- the consistent forger: inputs edited, K, tau, layouts and plans re-derived as the checker derives them --------------
def _rederive(doc) -> None:
    led, query, target, h, entries = parse_inputs(doc["inputs"])
    delta = plan_delta(query, target)
    pl = ledger.plan(entries, delta, h, fft=True)
    out = ledger.LedgerRun(pl)
    plans = {}
    for d in ledger.directions(entries):
        fs = ledger.fft_factors(entries, out, d)
        try:
            plans[d] = fft.fft_plan(fs, delta, h).to_json()
        except UndecidedError:  # no plan exists (no tilt reaches delta): the forger keeps the recorded one
            plans[d] = _w(doc)["fft"].get(d, next(iter(_w(doc)["fft"].values())))
    j = pl.to_json()
    _w(doc).update(K=j["K"], tau=j["tau"], layouts=j["layouts"], fft=plans)


CONSISTENT = [
    ("count 1999", "lap2000", {"event[0].count": "1999"}, "epsilon_upper"),
    ("count 10^5", "lap2000", {"event[0].count": str(10**5)}, "epsilon_upper"),
    ("count 3: no tilt reaches delta", "lap2000", {"event[0].count": "3"}, "witnesses.fft"),
    ("noise 100", "lap2000", {"event[0].noise_multiplier": "100"}, "epsilon_upper"),
    ("noise 400", "lap2000", {"event[0].noise_multiplier": "400"}, None),
    ("delta 1e-5", "small", {"target_delta": "1/100000"}, None),
    ("count 2 at noise 1: the FFT overflows", "lap2000", {"event[0].count": "2", "event[0].noise_multiplier": "1"}, "witnesses.fft"),
    ("RR noise 1e-6: the FFT overflows", "rr1000", {"event[0].noise_parameter": "1/1000000"}, "witnesses.fft"),
    ("epsilon 2", "small_eps", {"target_epsilon": "2"}, "bound and lower"),
]


@pytest.mark.parametrize("name,base,edit,needle", CONSISTENT, ids=[c[0] for c in CONSISTENT])
def test_consistent_forger_refused(certs, name, base, edit, needle):
    doc = copy.deepcopy(certs[base])
    doc["inputs"].update(edit)
    _rederive(doc)
    _refused(doc, needle)


@pytest.mark.slow
def test_consistent_forger_at_huge_counts_refused_fast(certs):
    for count in (10**7, 10**18):
        doc = copy.deepcopy(certs["lap2000"])
        doc["inputs"]["event[0].count"] = str(count)
        _rederive(doc)
        _refused(doc)


def test_rederived_plan_of_the_genuine_inputs_is_the_recorded_one(certs):
    """The forger's derivation above is the checker's: on unedited inputs it gives back the recorded witnesses."""
    for name in ("small", "dl", "ed_rr"):
        doc = copy.deepcopy(certs[name])
        _rederive(doc)
        assert _w(doc) == _w(certs[name])


def test_fft_on_a_one_event_ledger_refused(certs):
    doc = copy.deepcopy(certs["lap2000"])
    doc["inputs"]["event[0].count"] = "1"
    led, query, target, h, entries = parse_inputs(doc["inputs"])
    j = ledger.plan(entries, plan_delta(query, target), h, fft=True).to_json()
    _w(doc).update(K=j["K"], tau=j["tau"], layouts=j["layouts"])  # the plan's own fft_plan may exist for T = 1: keep the recorded one
    rep = _refused(doc, "at least 2 events")
    assert rep.exit_code == 4


# -- the exact products and the FFT witnesses --------------------------------------------------------------------------
def _rerendered(doc, w):
    with workprec(doc["precision"]):
        ev = evaluate_events_pld(doc["inputs"], w)
    return render_document(doc["kind"], doc["precision"], doc["inputs"], ev, w, None, doc["software"])


@pytest.mark.parametrize("base", ["small", "dl", "lap2000", "pg2000", "small_eps", "ed_rr"])
def test_fft_witnesses_minus_fft_on_the_exact_path(certs, base):
    """Without ``fft`` the witnesses are the exact products' (legacy right-to-left chain without ``chain``): the
    texts and budget of the FFT are refused as they stand; fully re-rendered, the file verifies exactly when the
    exact searches leave the same read-off points (every number then re-derived by the exact products), and with
    ``chain`` it is then what ``--composition exact`` writes, byte for byte."""
    doc = copy.deepcopy(certs[base])
    _w(doc).pop("fft")
    _refused(doc)
    event, relation, kw = CASES[base]
    kw = {k: v for k, v in kw.items() if k != "composition"}
    exact = json.loads(certify_events_pld(ledger_of(event, relation), grid="1e-2", composition="exact", **kw).dumps())
    same = all(_w(exact)[k] == _w(certs[base])[k] for k in ("epsilon_upper", "epsilon_lower", "bound", "lower", "lower_directions") if k in _w(exact))
    w = copy.deepcopy(_w(certs[base]))
    w.pop("fft")
    w["chain"] = "left-to-right"
    try:
        nd = _rerendered(certs[base], w)
    except InputError as err:
        assert not same, err  # the exact searches leave other points: no exact certificate carries these
        return
    assert same
    assert dumps_document(nd) == dumps_document(exact)
    assert verify.verify_text(dumps_document(nd)).exit_code == 0


# -- the producer: bounded-loss ledgers the FFT cannot plan (the crash found by this suite; fft_plan now says so) --
OVERFLOW = [
    ("Laplace x 2", selfc(laplace("1"), 2), "add-remove", {"delta": "1e-6"}),
    ("Laplace x 10", selfc(laplace("1"), 10), "add-remove", {"delta": "1e-6"}),
    ("RandomizedResponse x 2", selfc(RR, 2), "replace-one", {"delta": "1e-6"}),
    ("EpsilonDelta x 2", selfc({"class_name": "EpsilonDeltaDpEvent", "epsilon": "1/2", "delta": "0"}, 2), "add-remove", {"delta": "1e-6"}),
    ("DiscreteLaplace x 2", selfc(DL, 2), "add-remove", {"delta": "1e-6"}),
    ("Laplace x 2 epsilon 1", selfc(laplace("1"), 2), "add-remove", {"epsilon": "1"}),
]


@pytest.mark.parametrize("name,event,relation,kw", OVERFLOW, ids=[c[0] for c in OVERFLOW])
def test_fft_overflow_is_undecided_not_a_crash(name, event, relation, kw):
    led = ledger_of(event, relation)
    with pytest.raises(UndecidedError, match="overflows|no tilt reaches delta"):
        certify_events_pld(led, grid="1e-2", composition="fft", **kw)
    cert = certify_events_pld(led, grid="1e-2", composition="exact", **kw)  # the exact products certify it
    assert verify.verify_text(cert.dumps()).exit_code == 0


def test_default_composition_falls_back_to_the_exact_products(tmp_path, capsys):
    """RandomizedResponse at noise 1e-6 x 1000: the default (FFT from 1000 events) overflowed (a traceback); now the
    exact products certify it, and ``--composition fft`` ends with exit 3 and one line."""
    ev = selfc({**RR, "noise_parameter": "1/1000000"}, 1000)
    path, out = tmp_path / "ev.json", tmp_path / "c.json"
    path.write_text(json.dumps(ev))
    args = ["account", str(path), "--accountant", "pld", "--neighboring", "replace-one", "--delta", "1e-6", "--grid", "1e-2"]
    assert cli.main(args + ["--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert "fft" not in _w(doc) and _w(doc)["chain"] == "left-to-right"
    assert cli.main(["verify", "--quiet", str(out)]) == 0
    capsys.readouterr()
    assert cli.main(args + ["--composition", "fft", "--out", str(tmp_path / "f.json")]) == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err and "undecided" in err and len(err.strip().splitlines()) == 1


# -- the bytes of the file, through the command line ------------------------------------------------------------------
TEXT_EDITS = [
    ("duplicate fft key", lambda t: t.replace('"fft": {', '"fft": {"remove": 1}, "fft": {', 1), 2),
    ("N as 2048.0", lambda t: t.replace('"N": 2048', '"N": 2048.0', 1), 2),
    ("N as 02048", lambda t: t.replace('"N": 2048', '"N": 02048', 1), 2),
    ("N of 5000 digits", lambda t: t.replace('"N": 2048', '"N": 1' + "0" * 5000, 1), 4),
    ("N of 10^6 digits", lambda t: t.replace('"N": 2048', '"N": 1' + "0" * 10**6, 1), 2),
    ("N Infinity", lambda t: t.replace('"N": 2048', '"N": Infinity', 1), 2),
    ("lam NaN", lambda t: t.replace('"lam": "13059317/1048576"', '"lam": NaN', 1), 2),
    ("plan keys in reverse order", None, 4),
    ("compact JSON", lambda t: json.dumps(json.loads(t)), 4),
]


@pytest.mark.parametrize("name,edit,code", TEXT_EDITS, ids=[c[0] for c in TEXT_EDITS])
def test_text_edit_refused_without_traceback(certs, tmp_path, capsys, name, edit, code):
    base = dumps_document(certs["small"])
    if edit is None:
        doc = copy.deepcopy(certs["small"])
        _w(doc)["fft"]["remove"] = dict(reversed(list(_plan(doc).items())))
        doc["digest"] = digest_of(doc)
        text = json.dumps(doc, indent=2) + "\n"
    else:
        text = edit(base)
    assert text != base
    cli_verify_exits(tmp_path, capsys, text, code)
