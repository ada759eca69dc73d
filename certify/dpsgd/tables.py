"""Bok (2026) Tables 1-6 regenerated: all four columns certified, each cell classified against the printed value.

Columns (see ``baselines``): *ours* (Corollary 1 with the certified rho of (5)), *Birrell et al.*
(Theorem 3.4, min over m in {3, 4, 5}), *Wang et al.* (dp_accounting's fixed-size replace-one RDP),
all three certified enclosures of the minimum over integer alpha in [2, 256]; *lossless*: the certified
enclosure [eps_low, eps_up] of the exact eps(delta) of the T-fold composition of the fixed-size
replace-one max-profile pair at PLD grid 1e-4 (:func:`certify.pld.tables.lossless_cells`; the float
estimate of dp_accounting stays a baseline of ``certify dpsgd --accountant lossless`` and of the figures).

The enclosure of *ours*: its upper endpoint is the certified epsilon at the alpha chosen by the
float estimate (any alpha gives a valid bound); its lower endpoint bounds the minimum over every
alpha from below, using rho(alpha) >= J(0) (closed form, every alpha) and the certified lower bound
of rho at the chosen alpha.

A numeric cell of ours / Birrell / Wang is *confirmed* when its enclosure meets the set of numbers that
print as the published value (e.g. [1.765, 1.775] for 1.77). A ">= 20 for all accountants" row (every T
from its first T on) and a ">= 100" cell are confirmed when the certified lower bounds reach 20 or 100.
Anything else is a *mismatch*, reported with both numbers and the distance. The lossless column is
classified as :mod:`certify.pld.tables` defines: confirmed / above / below / undecided (a ">= 20" row:
confirmed when eps_low at its first T reaches 20, eps being non-decreasing in T).

Where the work runs: one task per (p, sigma) for the Rényi columns (each rho(alpha, p, sigma) computed
once in it and reused for every T and delta) and one per (p, sigma) for the lossless column (one plan and
one chain of squared PLD powers for every T and delta), all on :func:`certify.sweep.executor.make_executor`
(Dask if installed, else a local process pool; ``--scheduler`` an existing Dask cluster), biggest first.
The output depends neither on the number of workers nor on the order of completion.

Caching: the Rényi cells are cached on disk as witnesses and re-derived on every run (see
:func:`compute_group`). The certified lossless enclosures are never cached: a cached enclosure could only
be re-checked by recomputing it (the PLD checker re-runs the composition), so each run recomputes them.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import time

from ..balls import InputError, arb, ball, ball_endpoints, ctx, exact, exact_str, fmpq, lower_decimal, upper_decimal
from ..published import printed_interval

PUBLISHED = "bok2026_tables_1_to_6.csv"
T_GRID = (250, 500, 1000, 2000, 4000, 8000, 16000, 32000, 64000)
COLUMNS = ("ours", "birrell", "wang", "lossless")
PREC = 128
#: computed cells on disk; the version changes whenever the way a column is computed changes (v2: the
#: trapezoidal point bounds and economical certificates of the rho search), so old cells are not reused
CACHE_FILE = "bok_tables_cells.v2.json"


# --------------------------------------------------------------------------------------------
# Published rows
# --------------------------------------------------------------------------------------------
def read_published(tables_dir: str) -> list[dict]:
    path = os.path.join(tables_dir, "published", PUBLISHED)
    if not os.path.exists(path):
        from ..balls import InputError

        raise InputError("--tables-dir", f"{path} not found (run from the repository root or pass --tables-dir)")
    rows = []
    with open(path, newline="") as fh:
        for r in csv.DictReader(fh):
            r = dict(r)
            r["p"] = r["p"].rstrip(".")  # the transcription writes 0.0025. for 0.0025
            rows.append(r)
    return rows


def queries(rows: list[dict]) -> dict[tuple[str, str], set[tuple[int, str]]]:
    """(p, sigma) -> set of (T, delta) needed, expanding '>=T0' rows to every grid T >= T0."""
    out: dict[tuple[str, str], set] = {}
    for r in rows:
        key = (r["p"], r["sigma"])
        if r["T"].startswith(">="):
            T0 = int(r["T"][2:])
            ts = [T for T in T_GRID if T >= T0]
        else:
            ts = [int(r["T"])]
        out.setdefault(key, set()).update((T, r["delta"]) for T in ts)
    return out


# --------------------------------------------------------------------------------------------
# Computing one (p, sigma) group (in a worker process; results as exact JSON)
# --------------------------------------------------------------------------------------------
def _pair(x: arb) -> list[str]:
    lo, hi = ball_endpoints(x)
    return [exact_str(lo), exact_str(hi)]


CERTIFIED_FIELDS = ("ours", "ours_alpha", "wang", "wang_alpha", "birrell", "birrell_alpha")


def compute_group(
    p_text: str, sigma_text: str, todo: list[tuple[int, str]], cache_dir: str | None, with_lossless: bool = True, known: dict | None = None
) -> dict:
    """All four columns for every (T, delta) of one (p, sigma); values as exact [lo, hi] strings.

    ``known``: cells read from the on-disk cell cache. They are witnesses, not results: each is
    re-derived (the rho witness comes from the rho cache and is re-checked by the checker's evaluator,
    so no search runs; the baseline columns are recomputed) and must agree field by field with its
    certified columns; a cell that does not is discarded, recomputed from scratch and reported in
    ``out["_warnings"]``. A cached lossless value is a float estimate (never certified) and is reused.
    """
    from .mixture import J_zero
    from .problem import ALPHA_MAX, ALPHA_MIN, Problem

    p, sigma = exact(p_text), exact(sigma_text)
    out: dict = {}
    warnings: list[str] = []
    with ctx.workprec(PREC):
        J0 = {a: J_zero(Problem(a, p, sigma)) for a in range(ALPHA_MIN, ALPHA_MAX + 1)}
        for T, d_text in sorted(todo):
            old = (known or {}).get(f"{T}|{d_text}")
            old = old if isinstance(old, dict) else None
            cell = _cell(p_text, sigma_text, T, d_text, J0, cache_dir, old, with_lossless)
            if old is not None and any(old.get(k) != cell[k] for k in CERTIFIED_FIELDS):
                bad = [k for k in CERTIFIED_FIELDS if old.get(k) != cell[k]]
                warnings.append(
                    f"certify: warning: cached cell p={p_text} sigma={sigma_text} T={T} delta={d_text} "
                    f"failed its re-check ({', '.join(bad)} differ); discarded and recomputed"
                )
                cell = _cell(p_text, sigma_text, T, d_text, J0, cache_dir, None, with_lossless)
            out[f"{T}|{d_text}"] = cell
    if warnings:
        out["_warnings"] = warnings
    return out


def _cell(p_text: str, sigma_text: str, T: int, d_text: str, J0: dict, cache_dir, old: dict | None, with_lossless: bool) -> dict:
    """One table cell (all columns); with a cached cell ``old``, its alpha is reused and its lossless estimate kept."""
    from .accountant import certify_dpsgd
    from .baselines.columns import epsilon_birrell, epsilon_wang
    from .certificates import eps_ball
    from .problem import Problem

    p, sigma, delta = exact(p_text), exact(sigma_text), exact(d_text)
    alpha = old.get("ours_alpha") if old is not None and isinstance(old.get("ours_alpha"), int) else None
    if alpha is not None and not 2 <= alpha <= 256:
        alpha = None
    o = certify_dpsgd(p, sigma, T, delta, alpha=alpha, cache_dir=cache_dir)
    alpha = int(o.certificate.inputs["alpha"])
    eps = o.certificate.quantities["epsilon"].value
    # lower bound of min over alpha: rho(alpha) >= J(0) for every alpha; where that is not
    # enough to clear the certified upper bound, also rho(alpha) >= J-lower(1/2) (B.3.1)
    lower = eps
    for a, j0 in J0.items():
        lb = eps_ball(j0, a, T, delta)
        if lb.lower() < eps.upper():
            lb = eps_ball(j0.max(J_half_lower(Problem(a, p, sigma))), a, T, delta)
        lower = lower.min(lb)
    ours = arb(lower.lower()).union(arb(eps.upper()))
    w, wa = epsilon_wang(p, sigma, T, delta)
    b, ba = epsilon_birrell(p, sigma, T, delta)
    cell = {"ours": _pair(ours), "ours_alpha": alpha, "wang": _pair(w), "wang_alpha": wa, "birrell": _pair(b), "birrell_alpha": ba}
    if with_lossless and old is not None and isinstance(old.get("lossless"), str):
        cell["lossless"] = old["lossless"]  # a float estimate, not certified: reused as is
    elif with_lossless:
        from .baselines.lossless import epsilon_lossless

        cell["lossless"] = repr(epsilon_lossless(float(p_text), float(sigma_text), T, float(d_text)))
    return cell


_JHALF: dict = {}


def J_half_lower(prob) -> arb:
    """A certified lower bound on J(1/2) <= rho (point bound of B.3.1; the window only affects tightness)."""
    from .mixture import choose_rule, point_bounds

    key = (prob, ctx.prec)
    if key not in _JHALF:
        half = fmpq(1, 2)
        pb = point_bounds(prob, half, choose_rule(prob, half, 60))
        _JHALF[key] = arb(pb.J_lo.lower())
    return _JHALF[key]


# --------------------------------------------------------------------------------------------
# The work, as tasks on the sweep executor (certify.sweep.executor)
# --------------------------------------------------------------------------------------------
#: grid of the certified lossless column (the paper's PLD discretisation interval)
LOSSLESS_GRID = "1e-4"


def renyi_tasks(rows: list[dict], cache_dir: str | None, with_lossless: bool = False) -> list[tuple]:
    """One task per (p, sigma): the Rényi columns of every needed (T, delta), with the cached cells as witnesses.

    rho(alpha) depends on (alpha, p, sigma) only, so one task per (p, sigma) computes each rho it needs once
    (memoised in the worker, and in the rho cache on disk) and reuses it for every T and delta of the group.
    ``with_lossless``: also the float lossless *estimate* (the figures use it; the tables do not)."""
    cached = _read_cell_cache(cache_dir)
    tasks = []
    for (p, s), todo in sorted(queries(rows).items()):
        have = cached.get(f"{p}|{s}", {})
        have = have if isinstance(have, dict) else {}
        # a cached cell is a witness, not a result: every needed cell is re-derived (no search: the rho
        # witnesses come from the rho cache and are re-checked), and compared with the cached one
        known = {k: v for k, v in have.items() if k != "_warnings"}
        tasks.append(("renyi", p, s, sorted(todo), cache_dir, with_lossless, known))
    return tasks


def lossless_queries(rows: list[dict]) -> dict[tuple[str, str], set[tuple[int, str]]]:
    """(p, sigma) -> set of (T, delta) of the certified lossless column; a '>=T0' row needs T0 only.

    One T suffices for a '>= 20 from T0 on' row: the exact eps(delta) of the T-fold composition is
    non-decreasing in T (the T-fold pair is the marginal, a post-processing, of the (T+1)-fold one, and the
    hockey-stick divergence does not grow under post-processing), so eps_low(T0) >= 20 proves every T >= T0."""
    out: dict = {}
    for r in rows:
        T = int(r["T"][2:]) if r["T"].startswith(">=") else int(r["T"])
        out.setdefault((r["p"], r["sigma"]), set()).add((T, r["delta"]))
    return out


def lossless_tasks(rows: list[dict], grid: str = LOSSLESS_GRID) -> list[tuple]:
    """One task per (p, sigma): one plan, one chain of squared PLD powers shared by every T and delta."""
    return [("lossless", p, s, sorted(cells), grid) for (p, s), cells in sorted(lossless_queries(rows).items())]


def task_cost(task: tuple) -> float:
    """A float estimate of a task's seconds, used only to order the tasks (biggest first, so that the workers
    finish together); it never touches a result. Lossless: the last squarings dominate, and they cost about
    the composed measure's atom count, 24 sqrt(T) times the one-step loss spread p sqrt(e^(4/sigma^2) - 1)
    (chi-square of the shifted Gaussians, Delta = 2/sigma) over the grid, times e^(4/sigma^2) for the wider
    one-step window of small sigma (fitted to measured times: about 3e-5 s per atom at sigma >= 4);
    Rényi: about 3 s per (p, sigma) cold, 1 s with cached witnesses."""
    import math

    if task[0] == "renyi":
        return 3.0 if not task[6] else 1.0
    _, p, s, cells, grid = task
    d2 = min(4.0 / float(s) ** 2, 1.5)  # capped: below sigma ~ 1.6 the window, not the spread, sets the width
    spread = float(p) * math.sqrt(math.expm1(d2))
    atoms = 24 * math.sqrt(max(T for T, _ in cells)) * spread / float(exact(grid))
    return 1.0 + 3e-5 * atoms * math.exp(d2)


def run_task(task: tuple) -> dict:
    """Run one task (in a worker; a module-level function for the executor). Returns the cells as exact
    strings, warnings, and the worker's usage: its pid, its peak resident set (``ru_maxrss``) and CPU time."""
    import resource

    t0, c0 = time.perf_counter(), time.process_time()
    if task[0] == "renyi":
        _, p, s, todo, cache_dir, with_lossless, known = task
        cells = compute_group(p, s, todo, cache_dir, with_lossless, known)
        warnings = cells.pop("_warnings", [])
    else:
        from ..pld.tables import lossless_cells

        _, p, s, todo, grid = task
        res = lossless_cells(p, s, todo, grid)
        cells = {f"{T}|{d}": (None if lo is None else [exact_str(lo), exact_str(up)]) for (T, d), (lo, up) in sorted(res.items())}
        warnings = []
    return {
        "kind": task[0],
        "group": f"{p}|{s}",
        "cells": cells,
        "warnings": warnings,
        "usage": {
            "pid": os.getpid(),
            "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "cpu_s": time.process_time() - c0,
            "wall_s": time.perf_counter() - t0,
        },
    }


def execute(tasks: list[tuple], jobs: int = 2, scheduler: str | None = None, executor_kind: str | None = None, progress=None) -> list[dict]:
    """Every task's result, in the order of ``tasks`` (whatever the order of completion).

    Runs on :func:`certify.sweep.executor.make_executor` (Dask if installed, else a local process pool;
    the cluster at ``scheduler`` when given) with ``jobs`` workers, biggest tasks submitted first; with
    ``jobs == 1`` and no scheduler or executor kind, in this process (no worker to start)."""
    order = sorted(range(len(tasks)), key=lambda i: (-task_cost(tasks[i]), i))
    out: list = [None] * len(tasks)
    done = 0
    if jobs == 1 and scheduler is None and executor_kind is None:
        if progress:
            progress(done, len(tasks))
        for i in order:
            out[i] = res = run_task(tasks[i])
            done += 1
            if progress:
                progress(done, len(tasks), res)
        return out
    from ..sweep.executor import make_executor

    with make_executor(executor_kind, None if scheduler else jobs, scheduler) as ex:
        if progress:
            progress(done, len(tasks))
        for k, res, error in ex.map_unordered(run_task, [tasks[i] for i in order]):
            i = order[k]
            if error is not None:
                msg = f"the {tasks[i][0]} task of p={tasks[i][1]} sigma={tasks[i][2]} failed on the cluster: {error}"
                if scheduler:  # e.g. the scheduler or its workers cannot import this certify (install it there)
                    raise InputError("--scheduler", msg)
                raise RuntimeError(f"bok: {msg}")
            out[i] = res
            done += 1
            if progress:
                progress(done, len(tasks), res)
    return out


def _read_cell_cache(cache_dir: str | None) -> dict:
    path = os.path.join(cache_dir, CACHE_FILE) if cache_dir else None
    if path and os.path.lexists(path):
        from ..inputfile import load_json, warn_discarded

        try:
            doc = load_json(path, "--cache-dir")  # a regular file only; size, depth, duplicate keys checked
        except InputError as err:
            warn_discarded(path, err)
            return {}
        return doc if isinstance(doc, dict) else {}
    return {}


def _write_cell_cache(cache_dir: str | None, results: dict) -> None:
    """The Rényi cells (witnesses for the next run). The certified lossless enclosures are never cached."""
    if cache_dir:
        from ..cli import write_atomically

        try:
            os.makedirs(cache_dir, exist_ok=True)
            write_atomically(os.path.join(cache_dir, CACHE_FILE), json.dumps(results), "--cache-dir")
        except (OSError, InputError) as err:  # e.g. the cache file is a FIFO: the cache is optional
            sys.stderr.write(f"certify: warning: cache not written ({' '.join(str(err).split())[:200]})\n")


def _merge(task_results: list[dict], results: dict) -> dict:
    """Task results into {group: {cell: {column: value}}}; warnings of workers to stderr (from the client)."""
    for res in task_results:
        for line in res["warnings"]:
            sys.stderr.write(line + "\n")
        group = results.setdefault(res["group"], {})
        if res["kind"] == "renyi":
            for k, cell in res["cells"].items():
                group.setdefault(k, {}).update(cell)
        else:
            for k, pair in res["cells"].items():
                group.setdefault(k, {})["lossless"] = pair
    return results


def compute_all(rows: list[dict], cache_dir: str | None, jobs: int = 2, progress=None, with_lossless: bool = True) -> dict:
    """The Rényi columns of every needed cell (and the float lossless estimate when ``with_lossless``: the
    figures' use), one task per (p, sigma) on the executor; cells cached on disk as witnesses when asked."""
    tasks = renyi_tasks(rows, cache_dir, with_lossless)
    results = _merge(execute(tasks, jobs, progress=progress), {f"{t[1]}|{t[2]}": {} for t in tasks})
    if tasks:
        _write_cell_cache(cache_dir, results)
    return results


# --------------------------------------------------------------------------------------------
# Classification
# --------------------------------------------------------------------------------------------
def _interval(text: str) -> tuple[fmpq, fmpq]:
    """The closed set of reals that print as ``text`` rounded to nearest."""
    lo, hi, _, _ = printed_interval(text, "nearest")
    return lo, hi


def classify_enclosure(lo: fmpq, hi: fmpq, text: str) -> tuple[str, fmpq]:
    """Numeric cell: confirmed when [lo, hi] meets the set printing as ``text``; else the distance."""
    a, b = _interval(text)
    if hi < a:
        return "mismatch", a - hi
    if lo > b:
        return "mismatch", lo - b
    return "confirmed", fmpq(0)


def classify_estimate(value: float, text: str) -> tuple[str, fmpq]:
    v = exact(repr(value))
    a, b = _interval(text)
    if a <= v <= b:
        return "confirmed", fmpq(0)
    return "mismatch", min(abs(v - a), abs(v - b))


def _lo_hi(cell: dict, col: str) -> tuple[fmpq, fmpq]:
    lo, hi = cell[col]
    return exact(lo), exact(hi)


def fmt(lo: fmpq, hi: fmpq) -> str:
    return f"[{lower_decimal(lo, 5)}, {upper_decimal(hi, 5)}]"


def classify_lossless(cell: dict | None, text: str) -> tuple[str, str, fmpq]:
    """(enclosure text, verdict, distance) of a printed lossless value against the certified enclosure.

    Verdicts as :func:`certify.pld.tables.classify` defines them: ``confirmed`` (the printed interval meets
    [eps_low, eps_up]; a ">= x" cell: eps_low >= x), ``above`` (the printed value overstates the column's
    exact eps), ``below`` (it understates it: refuted as an upper bound; a ">= x" cell whose eps_low < x),
    ``undecided`` (no eps_up found in the composed window)."""
    from ..pld.tables import classify as pld_classify

    pair = None if cell is None else cell.get("lossless")
    if not isinstance(pair, list) or len(pair) != 2:  # None, or a float estimate (not certified)
        return "not certified (no eps_up in the window)", "undecided", fmpq(0)
    lo, up = exact(pair[0]), exact(pair[1])
    verdict = pld_classify(text, lo, up)
    if verdict == "confirmed":
        dist = fmpq(0)
    elif text.startswith(">="):
        dist = exact(text[2:]) - lo
    else:
        a, b = _interval(text)
        dist = a - up if verdict == "above" else lo - b
    return fmt(lo, up), verdict, dist


def _relative_difference(ours: tuple[fmpq, fmpq], cell: dict) -> str:
    """Enclosure of (ours - lossless) / lossless in percent, from both certified enclosures."""
    pair = cell.get("lossless")
    if not isinstance(pair, list) or len(pair) != 2 or not exact(pair[0]) > 0:
        return ""
    (a, b), (c, d) = ours, (exact(pair[0]), exact(pair[1]))
    lo, hi = (a - d) / d * 100, (b - c) / c * 100
    return f"[{lower_decimal(lo, 4)}%, {upper_decimal(hi, 4)}%]"


def classify(rows: list[dict], results: dict) -> list[dict]:
    """One output row per published row, with per-column enclosure, verdict and distance.

    The lossless column of a '>=T0' row is read at T0 only (eps is non-decreasing in T, see
    :func:`lossless_queries`); the Rényi columns at every grid T >= T0 (their enclosures are per-alpha minima)."""
    out = []
    for r in rows:
        group = results[f"{r['p']}|{r['sigma']}"]
        o = {"table": r["table"], "delta": r["delta"], "p": r["p"], "sigma": r["sigma"], "T": r["T"]}
        if r["T"].startswith(">="):
            T0 = int(r["T"][2:])
            cells = [group[f"{T}|{r['delta']}"] for T in T_GRID if T >= T0]
            for col in COLUMNS:
                o[f"{col}_published"] = ">=20"
                if col == "lossless":
                    enc, verdict, dist = classify_lossless(group.get(f"{T0}|{r['delta']}"), ">=20")
                    o[col] = f"T={T0}: {enc} (certified; eps grows with T)"
                    o[f"{col}_verdict"] = verdict
                    o[f"{col}_distance"] = "" if verdict == "confirmed" or dist <= 0 else upper_decimal(ball(dist), 3)
                    continue
                low = min(_lo_hi(c, col)[0] for c in cells)
                ok = low >= 20
                o[col] = f"min lower bound over T: {lower_decimal(low, 5)}"
                o[f"{col}_verdict"] = "confirmed" if ok else "mismatch"
                o[f"{col}_distance"] = "" if ok else upper_decimal(ball(fmpq(20) - low), 3)
            o["relative_difference"] = ""
            out.append(o)
            continue
        cell = group[f"{r['T']}|{r['delta']}"]
        for col in COLUMNS:
            pub = r[col]
            o[f"{col}_published"] = pub
            if col == "lossless":
                o[col], verdict, dist = classify_lossless(cell, pub)
            else:
                lo, hi = _lo_hi(cell, col)
                alpha = cell.get(f"{col}_alpha")
                o[col] = fmt(lo, hi) + (f" alpha={alpha}" if alpha else "")
                if pub.startswith(">="):
                    bound = exact(pub[2:])
                    verdict = "confirmed" if lo >= bound else "mismatch"
                    dist = fmpq(0) if lo >= bound else bound - lo
                else:
                    verdict, dist = classify_enclosure(lo, hi, pub)
            o[f"{col}_verdict"] = verdict
            o[f"{col}_distance"] = "" if verdict == "confirmed" or dist <= 0 else upper_decimal(ball(dist), 3)
        o["relative_difference"] = _relative_difference(_lo_hi(cell, "ours"), cell)
        o["relative_difference_published"] = r["relative_difference"]
        out.append(o)
    return out


FIELDS = (
    ["table", "delta", "p", "sigma", "T"]
    + [f"{c}{s}" for c in COLUMNS for s in ("_published", "", "_verdict", "_distance")]
    + ["relative_difference_published", "relative_difference"]
)
#: verdicts of the certified lossless column (pld/tables.py); every other column: confirmed / mismatch
LOSSLESS_VERDICTS = ("confirmed", "above", "below", "undecided")


def render_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=FIELDS, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({k: r.get(k, "") for k in FIELDS})
    return buf.getvalue()


def counts(rows: list[dict]) -> dict[str, dict[str, int]]:
    """{column: {verdict: count}}: confirmed and mismatch for every column (mismatch: any verdict but
    confirmed), and for lossless also the split into above / below / undecided."""
    c = {col: {"confirmed": 0, "mismatch": 0} for col in COLUMNS}
    c["lossless"].update({v: 0 for v in LOSSLESS_VERDICTS[1:]})
    for r in rows:
        for col in COLUMNS:
            v = r[f"{col}_verdict"]
            c[col][v] = c[col].get(v, 0) + 1
            if v != "confirmed" and v != "mismatch":
                c[col]["mismatch"] += 1
    return c


def count_text(c: dict[str, int]) -> str:
    extra = [f"{c[v]} {v}" for v in LOSSLESS_VERDICTS[1:] if v in c]
    return f"{c['confirmed']} confirmed, {c['mismatch']} mismatch" + (f" ({', '.join(extra)})" if extra else "")


def render_md(table: int, rows: list[dict]) -> str:
    r0 = rows[0]
    c = counts(rows)
    lines = [
        f"# Bok (2026), Table {table}: delta = {r0['delta']}, p = {r0['p']}",
        "",
        "Regenerated by `certify tables --paper bok`; do not edit by hand. Each cell: the printed value, then",
        "our certified enclosure (the true value of the column's formula lies in it; for ours / Birrell / Wang",
        "the alpha is the one whose bound is smallest; lossless: the exact eps(delta) of the T-fold",
        f"composition of the fixed-size replace-one max-profile pair at PLD grid {LOSSLESS_GRID}), and the verdict.",
        "Lossless verdicts: confirmed (the printed value's rounding interval meets the enclosure), above (it",
        "overstates the pair's eps), below (it understates it), undecided. The relative difference is the",
        "enclosure of (ours - lossless) / lossless from both certified enclosures.",
        "",
        "Counts: " + "; ".join(f"{col} {count_text(c[col])}" for col in COLUMNS),
        "",
        "| sigma | T | ours (printed / certified) | Birrell et al. | Wang et al. | lossless (certified) | rel. diff. (printed / ours) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cols = []
        for col in COLUMNS:
            v = f"{r[f'{col}_published']} / {r[col]}"
            if r[f"{col}_verdict"] != "confirmed":
                v += f" **{r[f'{col}_verdict'].upper()}**" + (f" (distance {r[f'{col}_distance']})" if r[f"{col}_distance"] else "")
            cols.append(v)
        rd = f"{r.get('relative_difference_published', '')} / {r['relative_difference']}" if r["relative_difference"] else ""
        lines.append(f"| {r['sigma']} | {r['T']} | " + " | ".join(cols) + f" | {rd} |")
    return "\n".join(lines) + "\n"


def outputs(rows: list[dict]) -> dict[str, str]:
    out = {}
    for t in sorted({int(r["table"]) for r in rows}):
        sub = [r for r in rows if int(r["table"]) == t]
        out[f"bok_2026_table{t}.csv"] = render_csv(sub)
        out[f"bok_2026_table{t}.md"] = render_md(t, sub)
    return out


def compute_tables(
    rows: list[dict],
    cache_dir: str | None,
    jobs: int = 2,
    scheduler: str | None = None,
    executor_kind: str | None = None,
    grid: str = LOSSLESS_GRID,
    progress=None,
) -> dict:
    """{group: {cell: {column: value}}} for ``rows``: the Rényi tasks (cached cells re-derived) and the
    certified lossless tasks (never cached) on one executor, biggest first; usage reported on stderr."""
    t0 = time.perf_counter()
    renyi = renyi_tasks(rows, cache_dir)
    done = execute(renyi + lossless_tasks(rows, grid), jobs, scheduler, executor_kind, progress)
    results = _merge(done[: len(renyi)], {f"{t[1]}|{t[2]}": {} for t in renyi})
    if renyi:
        _write_cell_cache(cache_dir, results)
    _report_usage(done, time.perf_counter() - t0)
    return _merge(done[len(renyi) :], results)


def run(
    tables_dir: str, cache_dir: str | None, jobs: int = 2, scheduler: str | None = None, executor_kind: str | None = None, grid: str = LOSSLESS_GRID
) -> tuple[list[dict], dict[str, str]]:
    """Every cell of Tables 1-6 on one executor: the Rényi tasks (one per (p, sigma), cached cells re-derived)
    and the certified lossless tasks (one per (p, sigma), never cached: recomputed on every run), biggest
    first. Returns the classified rows and the files' texts (identical for any worker count and order)."""
    rows = read_published(tables_dir)
    t0 = time.perf_counter()
    tty = sys.stderr.isatty()

    def progress(done, total, res=None):
        bar = "#" * int(30 * done / max(total, 1))
        last = (
            ""
            if res is None
            else (
                f"; last: {res['kind']} p={res['group'].replace('|', ' sigma=')} "
                f"{res['usage']['cpu_s']:.0f} s CPU, {res['usage']['maxrss_mib']:.0f} MiB"
            )
        )
        line = f"bok: tasks (Rényi and certified lossless, per (p, sigma)) [{bar:<30}] {done}/{total} ({time.perf_counter() - t0:.0f} s{last})"
        sys.stderr.write(("\r" + line) if tty else (line + "\n"))
        if tty and done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    results = compute_tables(rows, cache_dir, jobs, scheduler, executor_kind, grid, progress)
    classified = classify(rows, results)
    return classified, outputs(classified)


def _report_usage(done: list[dict], wall: float) -> None:
    """Peak memory per worker process and CPU time (stderr only: never in an output file)."""
    peak: dict[int, float] = {}
    for res in done:
        u = res["usage"]
        peak[u["pid"]] = max(peak.get(u["pid"], 0.0), u["maxrss_mib"])
    cpu = sum(res["usage"]["cpu_s"] for res in done)
    lossless_cpu = sum(res["usage"]["cpu_s"] for res in done if res["kind"] == "lossless")
    sys.stderr.write(
        f"bok: {len(done)} tasks in {wall:.0f} s wall, {cpu:.0f} s CPU in the tasks ({lossless_cpu:.0f} s lossless); "
        f"peak resident memory per process: {', '.join(f'{v:.0f} MiB' for v in sorted(peak.values(), reverse=True))}\n"
    )
