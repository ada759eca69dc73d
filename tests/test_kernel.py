"""certify_kernel, the second checker: its independence, its size, its arithmetic against 50+-digit mpmath
references written here (not from certify or the kernel), the published values of Watkins-Arora's Example 4.8,
and its command line (one verdict line, the exit statuses of certify verify, never a traceback)."""

import ast
import copy
import json
import os
import subprocess
import sys
from fractions import Fraction

import mpmath as mp
import pytest

import certify_kernel
from certify_kernel import numbers, objpert, poisson

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL = os.path.join(ROOT, "certify_kernel")
SOURCES = sorted(os.path.join(KERNEL, f) for f in os.listdir(KERNEL) if f.endswith(".py"))
#: what the kernel may import: the standard library modules it uses, mpmath, and python-flint (pld.py: exact integer
#: polynomial products, fmpz_poly, only: checked below)
ALLOWED = {"__future__", "contextlib", "dataclasses", "fractions", "hashlib", "json", "math", "os", "re", "sys", "mpmath", "mpmath.libmp", "flint"}


def _trees():
    for path in SOURCES:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        yield path, text, ast.parse(text)


# --------------------------------------------------------------------------------------------
# Independence and size
# --------------------------------------------------------------------------------------------
def test_kernel_imports_nothing_from_certify():
    seen = set()
    for path, _, tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: inside certify_kernel only
                    continue
                names = [node.module]
            elif isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("__import__", "exec", "eval"):
                pytest.fail(f"{path}: dynamic import or exec")
            else:
                continue
            for name in names:
                assert name in ALLOWED, f"{path} imports {name}"
                seen.add(name)
    assert "mpmath" in seen and not any(n.startswith("certify") for n in seen)


def test_python_flint_is_used_for_exact_integer_products_only():
    """flint is imported by pld.py alone, and only fmpz_poly, used only as fmpz_poly(ints) * fmpz_poly(ints)."""
    for path, _, tree in _trees():
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "flint" for a in n.names]
        assert names == (["fmpz_poly"] if path.endswith("pld.py") else []), (path, names)
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "fmpz_poly"]
        products = [n for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) and n.left in calls and n.right in calls]
        uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "fmpz_poly"]
        assert len(calls) == len(uses) == 2 * len(products) == (2 if path.endswith("pld.py") else 0), path


def test_kernel_size_limits():
    total = 0
    for path, text, tree in _trees():
        total += len(text.splitlines())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                assert length <= 60, f"{os.path.basename(path)}:{node.name} has {length} lines"
                assert ast.get_docstring(node) or node.name.startswith("_") or length <= 8, f"{node.name}: no docstring"
    assert total <= 2500, total


def test_the_scan_would_fail_on_an_import_of_certify(tmp_path):
    tree = ast.parse("from certify.balls import arb\nimport numpy\n")
    names = [n.module if isinstance(n, ast.ImportFrom) else n.names[0].name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert [n for n in names if n not in ALLOWED] == ["certify.balls", "numpy"]


# --------------------------------------------------------------------------------------------
# The arithmetic against independent mpmath references (120 digits, written here)
# --------------------------------------------------------------------------------------------
def _mp(q: Fraction):
    return mp.mpf(q.numerator) / q.denominator


def _log_A_reference(n: int, q: Fraction, sigma: Fraction):
    """log of MTZ19's sum_k C(n,k) (1-q)^(n-k) q^k exp(k(k-1)/(2 sigma^2)), term by term at 120 digits."""
    with mp.workdps(120):
        qq, s = _mp(q), _mp(sigma)
        return mp.log(mp.fsum(mp.binomial(n, k) * (1 - qq) ** (n - k) * qq**k * mp.exp(mp.mpf(k * (k - 1)) / (2 * s * s)) for k in range(n + 1)))


def _inside(lo: Fraction, hi: Fraction, x, rel: float) -> None:
    with mp.workdps(120):
        assert _mp(lo) <= x <= _mp(hi), (lo, x, hi)  # soundness
        assert _mp(hi - lo) <= abs(x) * mp.mpf(rel), (float(hi - lo), x)  # tightness


@pytest.mark.parametrize(
    "alpha,q,sigma",
    [
        ("2", "1/100", "11/10"),
        ("9", "1/100", "11/10"),
        ("37/4", "1/100", "11/10"),
        ("64", "1/20", "3/2"),
        ("3/2", "1/1000", "7/10"),
        ("5", "1", "50"),
    ],
)
def test_rdp_against_a_60_digit_reference(alpha, q, sigma):
    a, qq, s = Fraction(alpha), Fraction(q), Fraction(sigma)
    n = a.numerator // a.denominator
    with mp.workdps(120):
        if a.denominator == 1:
            ref = _log_A_reference(n, qq, s) / (n - 1)
        else:  # the chord of K = log A between n and n + 1 (K(1) = 0)
            k0 = _log_A_reference(n, qq, s) if n > 1 else mp.mpf(0)
            ref = ((n + 1 - _mp(a)) * k0 + (_mp(a) - n) * _log_A_reference(n + 1, qq, s)) / (_mp(a) - 1)
    with numbers.working_precision(320):
        lo, hi = numbers.bounds(poisson.rdp(a, qq, s))
    _inside(lo, hi, ref, 1e-55)


def test_rdp_at_a_tiny_sampling_rate_keeps_its_relative_accuracy():
    """q = 1e-30: A - 1 is about q^2; the kernel's log1p form keeps every digit (a naive log(A) at 60 digits would not)."""
    q, s = Fraction(1, 10**30), Fraction(3)
    with mp.workdps(200):
        qq = _mp(q)
        ref = mp.log1p(sum(mp.binomial(4, k) * (1 - qq) ** (4 - k) * qq**k * mp.expm1(mp.mpf(k * (k - 1)) / 18) for k in range(2, 5))) / 3
    with numbers.working_precision(320):
        lo, hi = numbers.bounds(poisson.rdp(Fraction(4), q, s))
    with mp.workdps(200):
        assert _mp(lo) <= ref <= _mp(hi) and _mp(hi - lo) <= ref * mp.mpf("1e-60")


@pytest.mark.parametrize("t", ["0", "1/3", "4.9", "-2", "30", "-61", "75"])
def test_q1_against_mpmath(t):
    """Q1(t) = phi(t) - t Q(t) (Watkins-Arora (44)) at 1200 digits (the difference cancels: many digits)."""
    f = Fraction(t)
    lo, hi = objpert.q1_point(f, 320)
    with mp.workdps(1200):
        x = _mp(f)
        ref = mp.npdf(x) - x * mp.ncdf(-x)
        assert _mp(lo) <= ref <= _mp(hi)
        if abs(f) <= objpert.MAX_T:
            assert _mp(hi - lo) <= ref * mp.mpf("1e-90")


def test_decimals_are_the_outward_rounding():
    assert numbers.printed(Fraction(1, 3), up=True) == "3.333333334e-1"
    assert numbers.printed(Fraction(1, 3), up=False) == "3.333333333e-1"
    assert numbers.printed(Fraction(-1, 3), up=True) == "-3.333333333e-1"
    assert numbers.printed(Fraction(99999999999, 10**10), up=True) == "1.000000000e1"
    assert numbers.printed(Fraction(0), up=True) == "0"
    for text, value in (
        ("0.01", Fraction(1, 100)),
        ("1e-5", Fraction(1, 10**5)),
        ("37/4", Fraction(37, 4)),
        ("2.5E+3", Fraction(2500)),
        ("1e-3/7", Fraction(1, 7000)),
    ):
        assert numbers.parse_exact(text, "x") == value
    for bad in ("0x9", "٩", "1/0", "", "1e99999999", "nan", "1//2"):
        with pytest.raises(numbers.Malformed):
            numbers.parse_exact(bad, "x")


# --------------------------------------------------------------------------------------------
# Watkins-Arora, Example 4.8 and Appendix C.4: the published values
# --------------------------------------------------------------------------------------------
def _kernel_values(doc: dict) -> dict:
    assert certify_kernel.check_document(copy.deepcopy(doc)).status == 0
    with numbers.working_precision(2 * doc["precision"] + certify_kernel.EXTRA_BITS):
        return certify_kernel._derive(doc, objpert).values  # (the derivation the check just made)


def _check_published(values: dict, name: str, lo: str, hi: str) -> None:
    klo, khi = values[name]
    assert Fraction(lo) <= klo and khi <= Fraction(hi), (name, float(klo), float(khi))
    assert khi - klo <= abs(klo) * Fraction(1, 10**50)


@pytest.fixture(scope="module")
def example_4_8():
    """Example 4.8 at N = 1500 (Theorem 4.1 only)."""
    from certify.objpert import tables as T
    from certify.objpert.certificates import certify_theorem_4_1

    return _kernel_values(certify_theorem_4_1(T.example_problem("1/100"), "1", iterations=1500).to_json())


@pytest.mark.parametrize(
    "name,lo,hi",
    [
        ("threshold7", "1318", "1319"),  # "The threshold (7) evaluates to N >= 1319"
        ("rho_half_N", "1.65e-13", "1.75e-13"),  # "rho^(N/2) = 1.7 x 10^-13" at N = 1500
        ("epsilon0", "0.020020", "0.020030"),  # "eps_0 = 0.0200 + 2.5 x 10^-5"
        ("delta_truncation", "1.515e-8", "1.525e-8"),  # "truncation mass e^-18 = 1.52 x 10^-8"
        ("delta_divergence", "3.635e-8", "3.645e-8"),  # "divergence term 3.64 x 10^-8"
        ("delta", "5.155e-8", "5.165e-8"),  # "delta(1) = 5.16 x 10^-8"
    ],
)
def test_example_4_8_published_values(example_4_8, name, lo, hi):
    _check_published(example_4_8, name, lo, hi)


@pytest.mark.slow  # the registered example runs the Theorem C.13 search (about 3 CPU s)
def test_appendix_c4_published_values():
    from certify.verify import spec_for

    values = _kernel_values(json.loads(spec_for(objpert.KIND).example().dumps()))
    for name, lo, hi in (
        ("alpha_bar", "3.8435489155", "3.8435489165"),  # C.4: "alpha-bar ~ 3.843548916" at N = 519
        ("s_N", "0.052095956205", "0.052095956215"),  # C.4: "s_519 ~ 0.05209595621"
        ("radius_step", "5.203524245e-5", "5.203524255e-5"),  # C.4: "G(1 - rho^N)/(mu alpha-bar) ~ 5.20352425e-5"
        ("delta_N", "9.8950587e-8", "9.89505873e-8"),  # C.4: "delta_519(1) <= 9.89505873e-8, rounded upward"
        ("delta_N_previous", "1.01736107e-7", "1.01736108e-7"),  # C.4: "against 1.01736108e-7 at N = 518"
    ):
        _check_published(values, name, lo, hi)
    assert values["first_passing_iterations"] == (519, 519)  # C.4: "the first integer ... is N = 519"


# --------------------------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------------------------
def _run(*args, **kw):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "certify_kernel", *args], capture_output=True, text=True, env=env, timeout=120, cwd=ROOT, **kw)


@pytest.fixture(scope="module")
def poisson_doc():
    from certify.verify import spec_for

    return json.loads(spec_for(poisson.KIND).example().dumps())


def _resealed(doc, edit):
    from certify_kernel.document import digest_of

    d = copy.deepcopy(doc)
    edit(d)
    d["digest"] = digest_of(d)
    return d


CLI_CASES = {
    "genuine": (lambda d: None, 0, "accept"),
    "digest": (lambda d: d.update(digest="sha256:" + "0" * 64), 4, "digest"),
    "delta 2": (lambda d: d["inputs"].update(delta="2"), 5, "hypothesis fails"),
    "epsilon_bound 1": (lambda d: d["witnesses"].update(epsilon_bound="1"), 4, "claim dp"),
    "integral": (lambda d: d["witnesses"].update(fractional="integral"), 4, "equation"),
    "kind": (lambda d: d.update(kind="events/pld"), 2, "not covered"),
}


@pytest.mark.parametrize("label", sorted(CLI_CASES))
def test_cli_verdicts(poisson_doc, tmp_path, label):
    edit, status, needle = CLI_CASES[label]
    doc = poisson_doc if label == "genuine" else _resealed(poisson_doc, edit)
    if label == "digest":
        doc = copy.deepcopy(poisson_doc)
        edit(doc)
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc))
    r = _run(str(path))
    assert r.returncode == status and needle in r.stdout and len(r.stdout.splitlines()) == 1, (label, r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    "content",
    [b"", b"not json", b"[]", b"{}", b"\xff\xfe", b"[" * 100000 + b"]" * 100000, b'{"schema": "certify/2"}', b"1" * 5000, b'{"a": NaN}'],
    ids=["empty", "text", "list", "object", "bytes", "deep", "schema only", "long integer", "NaN"],
)
def test_cli_hostile_files(tmp_path, content):
    path = tmp_path / "hostile.json"
    path.write_bytes(content)
    r = _run(str(path))
    assert r.returncode == 2 and "Traceback" not in r.stderr and len((r.stdout + r.stderr).splitlines()) == 1, (
        r.returncode,
        r.stdout,
        r.stderr[-300:],
    )


@pytest.mark.parametrize("args", [["DIR"], ["DIR/missing.json"], [], ["a", "b"]], ids=["directory", "missing", "no argument", "two"])
def test_cli_paths(tmp_path, args):
    r = _run(*[a.replace("DIR", str(tmp_path)) for a in args])
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1, (args, r.stderr)


def test_check_document_never_raises(poisson_doc):
    junk = [
        None,
        1,
        "x",
        [],
        {},
        {"schema": "certify/2"},
        dict(poisson_doc, precision=10**9),
        dict(poisson_doc, inputs=[]),
        dict(poisson_doc, claims={}),
    ]
    for k in ("quantities", "claims", "conclusions", "witnesses"):
        d = copy.deepcopy(poisson_doc)
        d[k] = {"x": [1]} if isinstance(d[k], dict) else [None, 1, {"name": []}]
        junk.append(d)
    for doc in junk:
        v = certify_kernel.check_document(doc)
        assert v.status in (2, 3, 4, 5) and isinstance(v.message, str)


def test_costly_certificate_is_decided_before_the_work(poisson_doc):
    """1,000 distinct phases at alpha = 4096 and 4096 recorded bits: refused or undecided at once, never a hang."""
    import time

    d = copy.deepcopy(poisson_doc)
    d["precision"], d["witnesses"]["alpha"] = 4096, "4096"
    d["inputs"]["phases"] = "1000"
    for i in range(1000):
        d["inputs"].update({f"phase[{i}].sampling_rate": f"1/{100 + i}", f"phase[{i}].noise_multiplier": "11/10", f"phase[{i}].steps": "10"})
    d = _resealed(d, lambda x: None)
    t = time.perf_counter()
    v = certify_kernel.check_document(d)
    assert v.status in (3, 4) and time.perf_counter() - t < 5, (v, time.perf_counter() - t)


def test_the_grid_of_orders_is_read_exactly():
    from certify_kernel import poisson_fails

    assert poisson_fails.grid("integers 2..5 and 8, 16") == [2, 3, 4, 5, 8, 16]
    for bad in ("integers 1..5 and 8", "integers 2..5 and 8, 5000", "2..5", "integers 2..5 and ", None):
        with pytest.raises(numbers.Malformed):
            poisson_fails.grid(bad)


#: reworded prose of the Poisson example that quotes no new number: every description and statement is re-derived
PROSE = {
    "rdp_total description": lambda d: d["quantities"]["rdp_total"].update(description="an estimate, not a bound"),
    "alpha description": lambda d: d["quantities"]["alpha"].update(description=d["quantities"]["alpha"]["description"] + "!"),
    "rdp[0] description": lambda d: d["quantities"]["rdp[0]"].update(
        description=d["quantities"]["rdp[0]"]["description"].replace("chord", "integral")
    ),
    "conclusion negated": lambda d: d["conclusions"][0].update(statement=d["conclusions"][0]["statement"].replace("the run is", "the run is NOT")),
}


@pytest.mark.parametrize("label", sorted(PROSE))
def test_reworded_prose_is_refused_by_both(poisson_doc, label):
    from certify.verify import verify_document

    doc = _resealed(poisson_doc, PROSE[label])
    v = certify_kernel.check_document(copy.deepcopy(doc))
    assert v.status == 4 and "re-derives" in v.message, v.message
    assert verify_document(copy.deepcopy(doc)).exit_code == 4
