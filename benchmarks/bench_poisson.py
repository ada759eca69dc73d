"""Speed of the certified Poisson Rényi accountant, side by side with the float accountants.

    python benchmarks/bench_poisson.py [--runs 30] [--opacus-rdp PATH]

For each query (poisson sampling, add/remove adjacency), in one process:
  * warm, fresh and checking with ``fractional="integral"`` (fractional orders by the defining integral: tighter);
  * certified, warm: ``certify_poisson(schedule, delta)`` called repeatedly (the float choice of alpha and the
    ball sums are memoised, as in a training loop that asks again and again);
  * certified, fresh ("producing"): ``certify_poisson(schedule, delta).to_json()`` (the certificate document,
    digest included, ready to write) with every process-level memo cleared before each call (float choice
    of alpha, ball sums, evaluations, parsed inputs): a new query in a warm interpreter;
  * checking its certificate ("checking"): ``verify_text`` of the certificate's JSON text (JSON parse,
    schema/layout, validators, digest, re-evaluation at the recorded alpha only, comparison of every
    quantity, claim and conclusion), in the same warm interpreter with the same memos cleared first;
    ``chk/fresh`` is their ratio (issue 12 asks for at most 0.10); ``eval ms`` is the re-evaluation at the
    recorded alpha alone (hypothesis claims, ball sums, conversion), which producing and checking both do:
    ``eval/frsh`` is therefore a floor for ``chk/fresh`` that no checker re-deriving the numbers can beat.
    Producing, checking and re-evaluating are timed in turn within each run (interleaved), so that their
    ratio compares them under the same load on a shared machine;
  * dp_accounting's ``RdpAccountant`` (default orders) on the same events, warm (optional package);
  * Opacus's ``RDPAccountant`` computation (its default orders; ``compute_rdp`` summed over the history and
    ``get_privacy_spent``) when its pure-numpy analysis module is available: pass ``--opacus-rdp`` the path of
    ``opacus/accountants/analysis/rdp.py`` (e.g. from ``pip download opacus --no-deps`` and unzipping the
    wheel into a temporary directory); nothing of Opacus is part of this repository.
Medians in milliseconds; ratios are float-accountant time / certified time (> 1: the certified one is faster).
``--others`` adds, for the record, the same produce/check ratio for certificates of other kinds (Bok's
``dpsgd/renyi-bok``, the two-phase ``dpsgd/renyi-bok-schedule``, the certified PLD ``pld/dpsgd``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
from fractions import Fraction

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from certify.balls import ctx, exact, fmpq  # noqa: E402
from certify.contract import POISSON_ADD_REMOVE  # noqa: E402
from certify.poisson.accountant import certify_poisson, clear_memo, epsilon_upper  # noqa: E402
from certify.poisson.certificates import evaluate  # noqa: E402
from certify.poisson.schedule import Phase, Schedule  # noqa: E402
from certify.verify import verify_text  # noqa: E402

QUERIES = [  # name, phases (q, sigma, T), delta
    ("q=0.01 s=1.1 T=1000", [(0.01, 1.1, 1000)], 1e-5),
    ("q=0.004 s=0.8 T=10^4", [(0.004, 0.8, 10000)], 1e-6),
    ("q=0.1 s=5 T=10^5", [(0.1, 5.0, 100000)], 1e-9),
    ("q=0.02 s=0.02 T=100", [(0.02, 0.02, 100)], 1e-5),
    ("q=0.01 s=0.01 T=1000", [(0.01, 0.01, 1000)], 1e-5),
    ("q=1 s=2 T=10", [(1.0, 2.0, 10)], 1e-5),
    ("3 phases", [(0.01, 1.1, 500), (0.02, 0.9, 200), (0.1, 2.5, 50)], 1e-5),
]


def _exact(x: float) -> fmpq:
    f = Fraction(x)
    return fmpq(f.numerator, f.denominator)


def _schedule(phases) -> Schedule:
    return Schedule(POISSON_ADD_REMOVE, tuple(Phase(_exact(q), _exact(s), t) for q, s, t in phases))


def _median_ms(fn, runs: int, before=None) -> float:
    times = []
    for _ in range(runs):
        if before:
            before()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def _clear():
    clear_memo()


def _dp_accounting():
    try:
        import dp_accounting
        from dp_accounting import rdp as dpa_rdp
    except ImportError:
        return None, None
    return dp_accounting, dpa_rdp


def _opacus(path: str | None):
    if not path:
        return None
    spec = importlib.util.spec_from_file_location("opacus_rdp_analysis", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _interleaved_ms(fns: dict, runs: int, before=None) -> dict:
    """Median ms of each function, timed in turn within every run (one run: each function once, memos cleared
    before each call), so that producing and checking see the same machine load (the machine is shared)."""
    times: dict = {k: [] for k in fns}
    for _ in range(runs):
        for k, fn in fns.items():
            if before:
                before()
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}


def _row(name, phases, delta, runs, dpa, dpa_rdp, op, opacus_alphas) -> str:
    sch = _schedule(phases)
    d = _exact(delta)
    cert = certify_poisson(sch, d)
    eps = float(epsilon_upper(cert))
    warm = _median_ms(lambda: certify_poisson(sch, d), runs)
    text = json.dumps(cert.to_json())
    alpha = exact(cert.witnesses["alpha"])

    def reevaluate():  # the re-evaluation at the recorded alpha alone (hypotheses, ball sums, conversion)
        with ctx.workprec(cert.precision):
            evaluate(sch, d, alpha, cert.witnesses["epsilon_bound"])

    assert verify_text(text).exit_code == 0
    t = _interleaved_ms({"fresh": lambda: certify_poisson(sch, d).to_json(), "check": lambda: verify_text(text), "eval": reevaluate}, runs, _clear)
    fresh, check, ev = t["fresh"], t["check"], t["eval"]
    row = f"{name:24s} {eps:10.5g} {warm:8.3f} {fresh:8.3f} {check:8.3f} {check / fresh:9.2f} {ev:7.3f} {ev / fresh:9.2f}"
    icert = certify_poisson(sch, d, fractional="integral")
    ieps = float(epsilon_upper(icert))
    iwarm = _median_ms(lambda: certify_poisson(sch, d, fractional="integral"), runs)
    itext = json.dumps(icert.to_json())
    assert verify_text(itext).exit_code == 0
    t = _interleaved_ms(
        {"fresh": lambda: certify_poisson(sch, d, fractional="integral").to_json(), "check": lambda: verify_text(itext)}, runs, _clear
    )
    ifresh, icheck = t["fresh"], t["check"]
    row += f" {ieps:10.5g} {iwarm:8.3f} {ifresh:8.2f} {icheck:8.2f} {icheck / ifresh:9.2f}"
    if dpa is not None:
        import logging

        logging.getLogger("absl").setLevel(logging.ERROR)
        event = dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s)), t) for q, s, t in phases])

        def run_dpa():
            acc = dpa_rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
            acc.compose(event)
            return acc.get_epsilon(delta)

        e_dpa = run_dpa()
        t_dpa = _median_ms(run_dpa, runs)
        row += f" {e_dpa:9.5g} {t_dpa:7.2f} {t_dpa / warm:8.1f} {t_dpa / fresh:9.2f}"
    else:
        row += f" {'-':>9s} {'-':>7s} {'-':>8s} {'-':>9s}"
    if op is not None:
        import warnings

        import numpy as np

        def run_op():
            r = np.zeros(len(opacus_alphas))
            for q, s, t in phases:
                r = r + op.compute_rdp(q=q, noise_multiplier=s, steps=t, orders=opacus_alphas)
            return op.get_privacy_spent(orders=opacus_alphas, rdp=r, delta=delta)[0]

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            e_op = float(run_op())
            t_op = _median_ms(run_op, runs)
        row += f" {e_op:9.5g} {t_op:7.2f} {t_op / warm:8.1f} {t_op / fresh:9.2f}"
    return row


OTHERS = [  # name, producer (returns a Certificate)
    ("renyi-bok p=1/100 s=2 T=1000", lambda: _bok("1/100", "2", 1000, "1e-6")),
    ("renyi-bok p=1/1000 s=4 T=4000", lambda: _bok("1/1000", "4", 4000, "1e-5")),
    ("renyi-bok-schedule 2 phases", lambda: _bok_schedule()),
    ("pld/dpsgd q=1/100 s=2 T=20 h=1e-3", lambda: _pld()),
]


def _bok(p, s, t, d):
    from certify.dpsgd.accountant import certify_dpsgd

    return certify_dpsgd(p, s, t, d).certificate


def _bok_schedule():
    from certify.contract import FIXED_SIZE_REPLACE_ONE
    from certify.poisson.fixed_size import certify_fixed_size_schedule
    from certify.poisson.schedule import parse_schedule

    sch = parse_schedule(
        [{"sampling_rate": "1/100", "noise_multiplier": "2", "steps": 600}, {"sampling_rate": "1/50", "noise_multiplier": "3", "steps": 200}],
        contract=FIXED_SIZE_REPLACE_ONE,
    )
    return certify_fixed_size_schedule(sch, "1e-6")


def _pld():
    from certify.pld import certify_pld

    return certify_pld(POISSON_ADD_REMOVE, "1/100", "2", 20, "1e-5", grid="1e-3")


def _clear_all():
    clear_memo()
    from certify.dpsgd.accountant import clear_memo as clear_bok
    from certify.pld.compose import clear_cache

    clear_bok()
    clear_cache()


def _others(runs: int) -> None:
    print(f"\n{'other kinds':34s} {'fresh ms':>9s} {'check ms':>9s} {'chk/fresh':>9s}")
    for name, make in OTHERS:
        text = make().dumps()
        t = _interleaved_ms({"fresh": lambda: make().to_json(), "check": lambda: verify_text(text)}, runs, _clear_all)
        fresh, check = t["fresh"], t["check"]
        print(f"{name:34s} {fresh:9.2f} {check:9.2f} {check / fresh:9.2f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--opacus-rdp", metavar="PATH", help="path to opacus/accountants/analysis/rdp.py")
    ap.add_argument("--others", action="store_true", help="also the produce/check ratio of other certificate kinds")
    args = ap.parse_args(argv)
    dpa, dpa_rdp = _dp_accounting()
    op = _opacus(args.opacus_rdp)
    opacus_alphas = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))  # Opacus RDPAccountant default
    versions = []
    if dpa is not None:
        import importlib.metadata as md

        versions.append(f"dp-accounting {md.version('dp-accounting')}")
    if op is not None:
        versions.append(f"opacus analysis/rdp.py from {args.opacus_rdp}")
    print(f"# runs per median: {args.runs}; {', '.join(versions) or 'no float accountant available'}")
    head = (
        f"{'query':24s} {'eps cert':>10s} {'warm ms':>8s} {'fresh ms':>8s} {'check ms':>8s} {'chk/fresh':>9s}"
        f" {'eval ms':>7s} {'eval/frsh':>9s}"
        f" {'eps integ':>10s} {'warm ms':>8s} {'fresh ms':>8s} {'check ms':>8s} {'chk/fresh':>9s}"
        f" {'dpa eps':>9s} {'dpa ms':>7s} {'dpa/warm':>8s} {'dpa/fresh':>9s}"
        f" {'opa eps':>9s} {'opa ms':>7s} {'opa/warm':>8s} {'opa/fresh':>9s}"
    )
    print(head)
    for name, phases, delta in QUERIES:
        print(_row(name, phases, delta, args.runs, dpa, dpa_rdp, op, opacus_alphas))
    if args.others:
        _others(max(3, args.runs // 5))
    return 0


if __name__ == "__main__":
    sys.exit(main())
