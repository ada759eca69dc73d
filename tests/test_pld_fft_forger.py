"""A forger's attack on the FFT pld/dpsgd certificates (issue 24/25 review; witness ``fft``, certify.pld.fft).

Cheap certificates (q = 1/100, sigma = 2, delta = 1e-6, T = 100-1000, grid 1e-2, ``method="fft"``), every field a
reader sees edited and re-sealed (``reseal``): statements, descriptions, equations, the budget (fft_points, width),
software, precision, the decimal renderings and other spellings of the same number, JSON types (floats, booleans,
integers for text), huge and negative values, plans moved between directions, contracts and certificates, T changed
with the plan re-derived for the new T. ``certify verify`` must refuse each (exit 4 / 5, or exit 2 for a file that is
not a certificate); the kernel must not accept the ones whose statements it re-derives. The kernel is a checker of
truth (docs/kernel.md): a reproduction-only edit whose every statement is still true (a plan number, K, precision, an
input or witness respelt with the same value, the pld budget, which its pld module does not re-derive) is refused by
``certify verify`` and accepted by the kernel, by design; those cases assert certify's refusal only.
Genuine FFT certificates (both contracts, T = 2 .. 1000) verify at 1x, 2x and 4x the recorded precision and are
accepted by the kernel.

Found by this suite and fixed (2026-12-03): a witness read-off point written as a JSON integer (``"epsilon_lower": 0``,
certify writes the text ``"0"``) was accepted by ``certify verify`` (exit 0) and refused by the kernel (exit 4): both
epsilons are now read as the texts certify writes (pld/dpsgd and events/pld). A genuine FFT certificate was refused
(exit 4) by ``certify verify`` in a process whose numpy does not dispatch its AVX2 / FMA kernels
(NPY_DISABLE_CPU_FEATURES=X86_V3): numpy's complex multiply rounds differently there and moved the centres of the delta
balls by a few ulps; certify.pld.fft now does its complex products in real float64 operations (bit for bit the same on
any IEEE machine), and its plan's float choices keep 24 significant bits. The exact chain's certificate, the control,
verifies too.
"""

from __future__ import annotations

import copy
import json
import time

import pytest

import certify_kernel
from certify.certificate import dumps_document
from certify.contract import FIXED_SIZE_REPLACE_ONE, POISSON_ADD_REMOVE
from certify.balls import InputError
from certify.pld import certify_pld
from certify.verify import verify_text
from test_forger import reseal
from test_forger21 import _set

CONTRACTS = {"poisson": POISSON_ADD_REMOVE, "fixed-size": FIXED_SIZE_REPLACE_ONE}


def _text(contract: str, T: int, grid: str = "1e-2", method: str = "fft") -> str:
    return certify_pld(CONTRACTS[contract], "1/100", "2", T, "1e-6", grid, method=method).dumps()


@pytest.fixture(scope="module")
def certs() -> dict:
    return {
        "p1000": json.loads(_text("poisson", 1000)),
        "f1000": json.loads(_text("fixed-size", 1000)),
        "p100": json.loads(_text("poisson", 100)),
        "p101": json.loads(_text("poisson", 101)),
        "p1000x": json.loads(_text("poisson", 1000, method="exact")),
        "p100x": json.loads(_text("poisson", 100, method="exact")),
    }


def _certify_code(doc: dict) -> int:
    """certify's verdict on the re-sealed document, as the bytes certify writes (exit 2 for what is no certificate)."""
    text = dumps_document(reseal(doc))
    try:
        return verify_text(text).exit_code
    except InputError:
        return 2


def _kernel(doc: dict) -> int:
    return certify_kernel.check_text(dumps_document(reseal(doc))).status


def _w(d):
    return d["witnesses"]


def _plan(d, name="remove"):
    return d["witnesses"]["fft"][name]


def _conc(replace):
    def f(d):
        d["conclusions"][0]["statement"] = replace(d["conclusions"][0]["statement"])

    return f


# -- forgeries both checkers refuse: prose, renderings, profiles, mixing ------------------------------------------------
BOTH = [
    ("statement grid 0.01", "p1000", _conc(lambda s: s.replace("grid 1/100", "grid 0.01"))),
    ("statement eps decimal", "p1000", _conc(lambda s: s.replace("3823677/4194304", "0.9116356373"))),
    ("statement without the FFT words", "p1000", _conc(lambda s: s.split(", composed")[0] + ")")),
    ("statement trailing space", "p1000", _conc(lambda s: s + " ")),
    ("statement delta 1e-6", "p1000", _conc(lambda s: s.replace("1/1000000", "1e-6"))),
    (
        "delta_upper: the exact chain's description",
        "p1000",
        lambda d: d["quantities"]["delta_upper"].update(
            description="m_inf + sum m_i (1 - e^(eps - l_i))_+ of the composed pessimistic measures (worst direction)"
        ),
    ),
    ("delta_upper: the exact chain's equation", "p1000", _set(("quantities", "delta_upper", "equation"), "readoff: delta_up(epsilon_upper)")),
    ("delta_upper upper as a plain decimal", "p1000", _set(("quantities", "delta_upper", "upper"), "0.0000009999993673")),
    ("delta_upper upper with a leading zero", "p1000", _set(("quantities", "delta_upper", "upper"), "09.999993673e-7")),
    ("delta_upper upper with E", "p1000", _set(("quantities", "delta_upper", "upper"), "9.999993673E-7")),
    ("epsilon_upper lower as a plain decimal", "p1000", _set(("quantities", "epsilon_upper", "lower"), "0.9116356372")),
    ("epsilon_upper ball widened", "p1000", _set(("quantities", "epsilon_upper", "ball"), {"mid": ["3823677", -22], "rad": ["1", -30]})),
    ("epsilon_upper witness as a decimal", "p1000", _set(("witnesses", "epsilon_upper"), "0.9116356373")),
    ("fixed-size max plan as the only poisson plan", "p1000", lambda d: _w(d).update(fft={"max": copy.deepcopy(_plan(d, "remove"))})),
    ("an extra profile max", "p1000", lambda d: _w(d)["fft"].update(max=copy.deepcopy(_plan(d)))),
    ("a profile key spelt with a Cyrillic e", "p1000", lambda d: _w(d)["fft"].update({"remov\u0435": _w(d)["fft"].pop("remove")})),
    ("fft null", "p1000", _set(("witnesses", "fft"), None)),
    ("the chain added", "p1000", _set(("witnesses", "chain"), "left-to-right")),
    ("add_from added, the add plan dropped", "p1000", lambda d: (_w(d).update(add_from="remove"), _w(d)["fft"].pop("add"))),
    (
        "layouts swapped between directions",
        "p1000",
        lambda d: _w(d)["layouts"].update(remove=_w(d)["layouts"]["add"], add=_w(d)["layouts"]["remove"]),
    ),
]


def _mix(src, keys=("fft",)):
    def f(d, certs):
        _w(d).update(copy.deepcopy({k: _w(certs[src])[k] for k in keys}))
        _w(d).pop("chain", None)

    return f


MIXED = [
    ("poisson plans on the fixed-size certificate", "f1000", _mix("p1000")),
    ("the FFT witness of T = 1000 on the exact certificate", "p1000x", _mix("p1000")),
    ("the FFT witness of T = 100 on the exact certificate", "p100x", _mix("p100")),
    ("T = 100 certificate, steps 101, the plans of T = 101", "p100", lambda d, c: (d["inputs"].update(steps="101"), _mix("p101")(d, c))),
    (
        "... and the read-off points of T = 101",
        "p100",
        lambda d, c: (d["inputs"].update(steps="101"), _mix("p101", ("fft", "epsilon_upper", "epsilon_lower"))(d, c)),
    ),
    (
        "T = 1000 plans edited to T = 1001 with the input",
        "p1000",
        lambda d, c: (d["inputs"].update(steps="1001"), [p.update(T=1001) for p in _w(d)["fft"].values()]),
    ),
]


@pytest.mark.parametrize("name,base,forge", BOTH, ids=[c[0] for c in BOTH])
def test_forgery_refused_by_both_checkers(certs, name, base, forge):
    doc = copy.deepcopy(certs[base])
    forge(doc)
    assert _certify_code(copy.deepcopy(doc)) in (2, 4, 5)
    assert _kernel(doc) != 0


@pytest.mark.parametrize("name,base,forge", MIXED, ids=[c[0] for c in MIXED])
def test_mixed_witnesses_refused_by_both_checkers(certs, name, base, forge):
    doc = copy.deepcopy(certs[base])
    forge(doc, certs)
    assert _certify_code(copy.deepcopy(doc)) == 4
    assert _kernel(doc) != 0


# -- reproduction-only forgeries: certify refuses; the kernel (a checker of truth) may accept ----------------------------
L = "6159985/262144"  # the genuine remove tilt at T = 1000 (asserted below)
PLAN_EDITS = [
    ("N", 1024.0), ("N", -1024), ("N", 0), ("N", 2**64), ("N", 2**65), ("N", 10**5000), ("N", False),
    ("T", -1000), ("T", 0), ("T", 2**64), ("T", "1000"), ("T", 1000.0), ("T", True),
    ("base", 2**64), ("a", -605), ("j0", -1), ("j0", None), ("j1", 2**63),
    ("lam", "-" + L), ("lam", "0"), ("lam", "1/" + str(2**1200)), ("lam", "1/" + "7" * 5000), ("lam", L + " "), ("lam", " " + L),
    ("lam", "+" + L), ("lam", 23.498477935791016), ("lam", "0x1"), ("lam", None), ("lam", "9" * 399), ("lam", "6159985/262144.0"),
    ("threshold", "0.0009765625"), ("threshold", "2/2048"), ("threshold", "-1/1024"), ("threshold", 1 / 1024),
    ("s_alias_hi", 1024), ("s_alias_hi", "1024/1"), ("s_alias_hi", "2048"), ("s_alias_hi", "1e3"),
    ("s_top", "-13908013/262144"), ("h", "0.01"), ("h", "1/10"),
]  # fmt: skip


def test_the_plan_edits_start_from_the_genuine_plan(certs):
    assert _plan(certs["p1000"])["lam"] == L and _plan(certs["p1000"])["N"] == 1024


@pytest.mark.parametrize("key,value", PLAN_EDITS, ids=[f"{k}={str(v)[:24]}" for k, v in PLAN_EDITS])
def test_plan_edit_refused_fast(certs, key, value):
    doc = copy.deepcopy(certs["p1000"])
    _plan(doc)[key] = value
    t = time.perf_counter()
    assert _certify_code(doc) in (2, 4)
    assert time.perf_counter() - t < 30  # huge values refused by their size, not computed with


def _edit_all(d, key, value):
    for p in _w(d)["fft"].values():
        p[key] = value


REPRODUCTION = [
    ("plans swapped between directions", lambda d: _w(d).update(fft={"add": _plan(d, "remove"), "remove": _plan(d, "add")})),
    ("fixed-size max plan on both poisson directions", None),
    ("plans junk", lambda d: _w(d).update(fft={"add": "x", "remove": 1})),
    ("plan key order reversed", lambda d: _w(d).update(fft={"remove": _plan(d, "remove"), "add": _plan(d, "add")})),
    ("budget fft_points swapped", lambda d: d["budget"].update(fft_points={"add": "1024", "remove": "512"})),
    ("budget fft_points as integers", lambda d: d["budget"].update(fft_points={"add": 512, "remove": 1024})),
    ("budget fft_points 0x200", lambda d: d["budget"]["fft_points"].update(add="0x200")),
    ("budget: the exact chain's width", lambda d: d["budget"].update(width="eps_up - eps_low: one-step discretisation")),
    ("budget fft_points removed", lambda d: d["budget"].pop("fft_points")),
    ("budget prose false", lambda d: d["budget"].update(width="exact to every digit", fft_points={"add": "4194304", "remove": "4194304"})),
    ("software: numpy added", lambda d: d["software"].update(numpy="2.0")),
    ("precision 53", _set(("precision",), 53)),
    ("precision 167", _set(("precision",), 167)),
    ("precision 10^6", _set(("precision",), 10**6)),
    ("precision True", _set(("precision",), True)),
    ("K 70.0", _set(("witnesses", "K"), 70.0)),
    ("K True", _set(("witnesses", "K"), True)),
    ("K 71", _set(("witnesses", "K"), 71)),
    ("K 2^4000", _set(("witnesses", "K"), 2**4000)),
    ("lower_profiles add", _set(("witnesses", "lower_profiles"), ["add"])),
    ("lower_profiles both", _set(("witnesses", "lower_profiles"), ["remove", "add"])),
    ("lower_profiles twice", _set(("witnesses", "lower_profiles"), ["remove", "remove"])),
    ("epsilon_upper not in lowest terms", _set(("witnesses", "epsilon_upper"), "7647354/8388608")),
    ("epsilon_upper with +", _set(("witnesses", "epsilon_upper"), "+3823677/4194304")),
    ("epsilon_upper with a leading 0", _set(("witnesses", "epsilon_upper"), "03823677/4194304")),
    ("epsilon_upper with a space", _set(("witnesses", "epsilon_upper"), " 3823677/4194304")),
    ("epsilon_lower 0/1", _set(("witnesses", "epsilon_lower"), "0/1")),
    ("epsilon_lower -0", _set(("witnesses", "epsilon_lower"), "-0")),
    ("steps 1e3", _set(("inputs", "steps"), "1e3")),
    ("steps 01000", _set(("inputs", "steps"), "01000")),
    ("steps 2000/2", _set(("inputs", "steps"), "2000/2")),
    ("steps JSON integer", _set(("inputs", "steps"), 1000)),
    ("steps 10^4000", _set(("inputs", "steps"), "1" + "0" * 4000)),
    ("steps 10^10 with the plans' T", lambda d: (d["inputs"].update(steps="10000000000"), _edit_all(d, "T", 10**10))),
    ("steps 2", _set(("inputs", "steps"), "2")),
    ("sampling_rate 0.01", _set(("inputs", "sampling_rate"), "0.01")),
    ("grid 1e-2", _set(("inputs", "grid"), "1e-2")),
    ("delta 1e-6", _set(("inputs", "delta"), "1e-6")),
    ("noise_multiplier 4/2", _set(("inputs", "noise_multiplier"), "4/2")),
    (
        "delta_upper mid one ulp lower",
        lambda d: d["quantities"]["delta_upper"]["ball"]["mid"].__setitem__(0, str(int(d["quantities"]["delta_upper"]["ball"]["mid"][0]) - 1)),
    ),
    ("T = 101 certificate with steps 100", None),
]


@pytest.mark.parametrize("name,forge", REPRODUCTION, ids=[c[0] for c in REPRODUCTION])
def test_reproduction_forgery_refused_by_certify(certs, name, forge):
    if name.startswith("fixed-size"):
        doc = copy.deepcopy(certs["p1000"])
        _w(doc)["fft"] = {k: copy.deepcopy(_plan(certs["f1000"], "max")) for k in ("add", "remove")}
    elif name.startswith("T = 101"):
        doc = copy.deepcopy(certs["p101"])
        doc["inputs"]["steps"] = "100"
    else:
        doc = copy.deepcopy(certs["p1000"])
        forge(doc)
    t = time.perf_counter()
    assert _certify_code(copy.deepcopy(doc)) in (2, 4, 5)
    assert time.perf_counter() - t < 30
    status = _kernel(doc)  # any verdict, never an exception
    assert status in (0, 2, 3, 4, 5)


# -- the bytes of the file ----------------------------------------------------------------------------------------------
TEXT_EDITS = [
    ("duplicate fft key", lambda t: t.replace('"fft": {', '"fft": {"remove": 1}, "fft": {', 1), 2),
    ("duplicate lam key", lambda t: t.replace(f'"lam": "{L}"', f'"lam": "1/2", "lam": "{L}"', 1), 2),
    ("N as 1024.0", lambda t: t.replace('"N": 1024', '"N": 1024.0', 1), 2),
    ("N as 1.024e3", lambda t: t.replace('"N": 1024', '"N": 1.024e3', 1), 2),
    ("N as 01024", lambda t: t.replace('"N": 1024', '"N": 01024', 1), 2),
    ("N of 5000 digits", lambda t: t.replace('"N": 1024', '"N": 1' + "0" * 5000, 1), 4),
    ("N of 10^6 digits", lambda t: t.replace('"N": 1024', '"N": 1' + "0" * 10**6, 1), 2),
    ("T of 5000 digits", lambda t: t.replace('"T": 1000', '"T": 1' + "0" * 5000, 1), 4),
    ("precision of 5000 digits", lambda t: t.replace('"precision": 166', '"precision": 1' + "0" * 5000, 1), 2),
    ("lam NaN", lambda t: t.replace(f'"lam": "{L}"', '"lam": NaN', 1), 2),
    ("N Infinity", lambda t: t.replace('"N": 1024', '"N": Infinity', 1), 2),
    ("N 1e400", lambda t: t.replace('"N": 1024', '"N": 1e400', 1), 2),
    ("lam with an escaped digit", lambda t: t.replace(f'"lam": "{L[0]}', f'"lam": "\\u003{L[0]}', 1), 4),
    ("compact JSON", lambda t: json.dumps(json.loads(t)), 4),
    ("no final newline", lambda t: t.rstrip("\n"), 4),
]


def cli_verify_exits(tmp_path, capsys, text: str, code: int) -> None:
    """``certify verify`` of the file text ends with exit ``code`` within 30 s and prints no traceback."""
    from certify import cli

    path = tmp_path / "c.json"
    path.write_text(text)
    t = time.perf_counter()
    assert cli.main(["verify", "--quiet", str(path)]) == code
    assert time.perf_counter() - t < 30
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err


@pytest.mark.parametrize("name,edit,code", TEXT_EDITS, ids=[c[0] for c in TEXT_EDITS])
def test_text_edit_refused_without_traceback(certs, tmp_path, capsys, name, edit, code):

    text = edit(dumps_document(certs["p1000"]))
    assert text != dumps_document(certs["p1000"])
    cli_verify_exits(tmp_path, capsys, text, code)
    assert certify_kernel.check_text(text).status != 0 or code == 4  # a respelt layout: the kernel reads the values


# -- genuine certificates: certify writes them, both checkers accept, at every precision ----------------------------------
@pytest.mark.parametrize("contract", ["poisson", "fixed-size"])
@pytest.mark.parametrize("T", [2, 3, 101, 137])
def test_genuine_small_T_verifies_at_1x_2x_4x_and_kernel_accepts(contract, T):
    text = _text(contract, T)
    prec = json.loads(text)["precision"]
    assert "fft" in json.loads(text)["witnesses"]
    for p in (None, 2 * prec, 4 * prec):
        rep = verify_text(text, p)
        assert rep.exit_code == 0, (p, rep.problems)
    assert certify_kernel.check_text(text).status == 0


def test_the_consistent_forgery_is_what_certify_writes(certs):
    """T = 100 moved to T = 101 with everything re-derived for T = 101 is certify's own T = 101 certificate, byte
    for byte (the plan is a function of the inputs: no other consistent file exists)."""
    assert dumps_document(certs["p101"]) == _text("poisson", 101)
    assert verify_text(dumps_document(certs["p101"])).exit_code == 0
    doc = copy.deepcopy(certs["p100"])
    doc["inputs"]["steps"] = "101"
    for k in ("fft", "epsilon_upper", "epsilon_lower"):
        _w(doc)[k] = copy.deepcopy(_w(certs["p101"])[k])
    assert _certify_code(doc) == 4


@pytest.mark.parametrize("base", ["p1000", "p1000x"])
def test_read_off_point_as_a_json_integer_refused(certs, base):
    doc = copy.deepcopy(certs[base])
    assert _w(doc)["epsilon_lower"] == "0"
    _w(doc)["epsilon_lower"] = 0
    assert _kernel(copy.deepcopy(doc)) == 4  # the kernel refuses: never a spelling certify writes
    assert _certify_code(doc) == 4


# -- a genuine certificate checked on another CPU: numpy's dispatch of AVX2 / FMA kernels switched off ---------------------
def _x86_v3() -> bool:
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # another numpy layout: the test cannot switch the dispatch
        return False
    return bool(__cpu_features__.get("X86_V3"))


def _verify_without_avx2(tmp_path, text: str) -> int:
    """``certify verify`` of ``text`` in a fresh process whose numpy does not dispatch its X86_V3 (AVX2 / FMA3)
    kernels: what a machine without AVX2 (or numpy built for another baseline) computes."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    path = tmp_path / "c.json"
    path.write_text(text)
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": "X86_V3", "PYTHONPATH": str(root)}
    run = subprocess.run([sys.executable, "-m", "certify", "verify", "--quiet", str(path)], env=env, capture_output=True, text=True, timeout=600)
    assert "Traceback" not in run.stdout + run.stderr
    return run.returncode


@pytest.mark.skipif(not _x86_v3(), reason="numpy does not dispatch X86_V3 kernels here: nothing to switch off")
def test_exact_chain_certificate_verifies_on_another_cpu(tmp_path):
    """The control: the exact chain's numbers are integers, so its certificate verifies whatever numpy dispatches."""
    assert _verify_without_avx2(tmp_path, _text("fixed-size", 1000, method="exact")) == 0


@pytest.mark.skipif(not _x86_v3(), reason="numpy does not dispatch X86_V3 kernels here: nothing to switch off")
@pytest.mark.parametrize("contract, T", [("fixed-size", 1000), ("fixed-size", 137), ("poisson", 10000)])
def test_genuine_fft_certificate_verifies_on_another_cpu(tmp_path, contract, T):
    """A genuine FFT certificate written with numpy's AVX2/FMA kernels verifies where they are not dispatched (and the
    reverse, below): certify.pld.fft does its complex products in real float64 operations (cmul), since numpy's own
    complex multiply gave other bits without AVX2/FMA (7 of 11 certificates were refused before, exit 4)."""
    assert _verify_without_avx2(tmp_path, _text(contract, T)) == 0


@pytest.mark.skipif(not _x86_v3(), reason="numpy does not dispatch X86_V3 kernels here: nothing to switch off")
def test_fft_certificate_written_without_avx2_verifies_with_it(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    path = tmp_path / "c.json"
    env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": "X86_V3", "PYTHONPATH": str(root)}
    argv = ["dpsgd", "--accountant", "pld", "--sampling", "fixed-size", "--adjacency", "replace-one", "--sampling-rate", "1/100"]
    argv += ["--noise-multiplier", "2", "--steps", "1000", "--delta", "1e-6", "--grid", "1e-2", "--composition", "fft", "--out", str(path)]
    run = subprocess.run([sys.executable, "-m", "certify", *argv], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert verify_text(path.read_text()).exit_code == 0


def test_false_claims_refused_by_both_checkers(certs):
    """Forgeries whose claim is false: the T = 100 certificate's numbers at T = 1000 (with the T = 1000 plans), and
    epsilon_upper edited to 0.8 x with its statement. Both checkers refuse (the kernel by its own exact composition)."""
    d = copy.deepcopy(certs["p100"])
    d["inputs"]["steps"] = "1000"
    _w(d)["fft"] = copy.deepcopy(_w(certs["p1000"])["fft"])
    d2 = copy.deepcopy(certs["p1000"])
    up = _w(d2)["epsilon_upper"]
    assert up == "3823677/4194304"
    low = "6117883/8388608"  # 0.8 x, rounded down to 2^-24, in lowest terms
    _w(d2)["epsilon_upper"] = low
    d2["conclusions"][0]["statement"] = d2["conclusions"][0]["statement"].replace(up, low)
    for doc in (d, d2):
        assert _certify_code(copy.deepcopy(doc)) == 4
        assert _kernel(doc) in (4, 5)
