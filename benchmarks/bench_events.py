"""Speed of the certified Rényi accountant of dp_accounting's event algebra, side by side with dp_accounting's.

    python benchmarks/bench_events.py [--runs 5]

For each event (a mechanism composed ``count`` times) and for a heterogeneous ledger of 1000 distinct events, in one
process, each column the least time of ``--runs`` runs (5) of ``--queries`` queries each (200; fewer for a slow row:
as many as fit in :data:`RUN_SECONDS`), per query in milliseconds, the three producing columns' runs alternating
(the work itself: on shared cores a median measures the other processes' load too):
  * ``dp_accounting``: a fresh ``dp_accounting.rdp.RdpAccountant`` (its default orders): ``compose`` + ``get_epsilon``;
  * ``float``: a fresh ``certify.accounting.RdpAccountant``, every memo cleared before each query (float curves, ball
    sums; the clearing is not timed): ``compose`` + ``get_epsilon`` (the refusals, the float choice of the order, the
    hypotheses and the headline ball: the float returned, the certificate not built);
  * ``cert``: then ``.certificate`` (the certificate document of that answer, built on first access);
  * ``check``: ``certify verify`` of that certificate's file text in-process (:func:`certify.verify.verify_text`: the
    strict JSON read, digest, layout, spelling, re-evaluation at the recorded order only, canonical re-rendering),
    with the same memos cleared (and the checker's memos of a certificate's parsed inputs and ledger);
and both epsilons (ours is the certified upper bound rounded up; theirs a float estimate). ``ratio`` is
dp_accounting's time over ``float`` (>= 1: the certified answer is as fast or faster); ``check/certify`` is the
check's time over the producer's (``float`` + ``cert``: the product's rule, checking costs what re-deriving costs).

PLD rows (one run each, ``--pld-grids``): a heterogeneous ledger of 1000 events (300 Gaussian(20), 200 Laplace(50),
500 PoissonSampled(0.01, Gaussian(1.1)); add-remove) through dp_accounting's PLDs (pessimistic as its ``PLDAccountant``
builds them, and optimistic) and certify's (``certify.accounting.PLDAccountant``, kind ``events/pld``, both sides at once)
at the same ``value_discretization_interval``; the ratios are certify's time over dp_accounting's pessimistic run and
over its pessimistic + optimistic pair (the pair that brackets epsilon, as certify's run does), and the certified
bracket [epsilon_lower, epsilon_upper] is printed beside their two float estimates. A second PLD table: a mixture of Gaussians (user-level DP-SGD,
:func:`mog_event`) the same way.
"""

from __future__ import annotations

import argparse
import math
import time


def _clear():
    from certify.events import accountant
    from certify.events import certificates, ledger
    from certify.poisson import choice, rdp

    accountant._curve.cache_clear()
    for memo in (getattr(ledger, "_ledger_of_items", None), getattr(certificates, "_parse_items", None)):  # (absent before 2026-12-02)
        if memo is not None:
            memo.cache_clear()
    from certify.events.mechanisms import repeat_and_select as ras
    from certify.events.mechanisms import sampled_without_replacement as wor

    for f in (wor._difference_table, wor._log_A_floats, ras._grid_curve, ras._tnb_choice, ras._poisson_delta_float, ras.gamma_lower):
        f.cache_clear()
    rdp._log_A_int_cached.cache_clear()
    rdp._log_A_frac_cached.cache_clear()
    choice.clear_memo()


#: a run of a slow row holds as many queries as fit in this many seconds (at least one)
RUN_SECONDS = 2.0


def _time(jobs, runs, queries):
    """Per job ``(f, setup)``: (least over ``runs`` runs of the mean time per query in ms, the last value). A run of a
    job is ``queries`` calls of ``f(setup())`` (``setup`` untimed; fewer calls when one takes more than RUN_SECONDS /
    queries); the jobs' runs alternate (run 1 of each job, then run 2, ...), so a change of the machine's load falls
    on all of them alike."""
    sizes, values = [], []
    for f, setup in jobs:
        state = setup() if setup else None
        t0 = time.perf_counter()
        values.append(f(state))
        sizes.append(max(1, min(queries, int(RUN_SECONDS / max(time.perf_counter() - t0, 1e-9)))))
    best = [math.inf] * len(jobs)
    for _ in range(runs):
        for k, ((f, setup), n) in enumerate(zip(jobs, sizes)):
            spent = 0.0
            for _ in range(n):
                state = setup() if setup else None
                t0 = time.perf_counter()
                values[k] = f(state)
                spent += time.perf_counter() - t0
            best[k] = min(best[k], 1000 * spent / n)
    return list(zip(best, values))


def cases(dpa):
    g, rel = dpa, dpa.NeighboringRelation
    single = [
        ("Gaussian(1.1) x1000", g.SelfComposedDpEvent(g.GaussianDpEvent(1.1), 1000), rel.ADD_OR_REMOVE_ONE),
        ("Laplace(10) x100", g.SelfComposedDpEvent(g.LaplaceDpEvent(10.0), 100), rel.ADD_OR_REMOVE_ONE),
        ("ZCDp(0.01) x100", g.SelfComposedDpEvent(g.ZCDpEvent(0.01), 100), rel.ADD_OR_REMOVE_ONE),
        ("RR(0.5, 10) x100 replace-one", g.SelfComposedDpEvent(g.RandomizedResponseDpEvent(0.5, 10), 100), rel.REPLACE_ONE),
        ("RR(0.5, 10) x100 replace-special", g.SelfComposedDpEvent(g.RandomizedResponseDpEvent(0.5, 10), 100), rel.REPLACE_SPECIAL),
        ("Tree(1.13, 1600) x10", g.SelfComposedDpEvent(g.SingleEpochTreeAggregationDpEvent(1.13, 1600), 10), rel.REPLACE_SPECIAL),
        ("Poisson(0.01, 1.1) x1000", g.SelfComposedDpEvent(g.PoissonSampledDpEvent(0.01, g.GaussianDpEvent(1.1)), 1000), rel.ADD_OR_REMOVE_ONE),
        ("Poisson(0.001, 0.8) x10^4", g.SelfComposedDpEvent(g.PoissonSampledDpEvent(0.001, g.GaussianDpEvent(0.8)), 10**4), rel.ADD_OR_REMOVE_ONE),
        (
            "WOR(60000, 256, 1.1) x1000",
            g.SelfComposedDpEvent(g.SampledWithoutReplacementDpEvent(60000, 256, g.GaussianDpEvent(1.1)), 1000),
            rel.REPLACE_ONE,
        ),
        (
            "RepeatAndSelect(Gauss 4 x5, 10, 1)",
            g.dp_event.RepeatAndSelectDpEvent(g.SelfComposedDpEvent(g.GaussianDpEvent(4.0), 5), 10, 1),
            rel.ADD_OR_REMOVE_ONE,
        ),
        (
            "RepeatAndSelect(Gauss 4 x5, 10, inf)",
            g.dp_event.RepeatAndSelectDpEvent(g.SelfComposedDpEvent(g.GaussianDpEvent(4.0), 5), 10, float("inf")),
            rel.ADD_OR_REMOVE_ONE,
        ),
    ]
    events = []
    for i in range(1000):  # 1000 distinct events of six classes, replace-special (every class dp_accounting 0.6 supports there)
        k = i % 6
        if k == 0:
            events.append(g.GaussianDpEvent(20.0 + i / 100))
        elif k == 1:
            events.append(g.LaplaceDpEvent(50.0 + i))
        elif k == 2:
            events.append(g.ZCDpEvent(1e-5 * (1 + i / 1000)))
        elif k == 3:
            events.append(g.RandomizedResponseDpEvent(0.99 - i / 10**5, 4))
        elif k == 4:
            events.append(g.SingleEpochTreeAggregationDpEvent(30.0 + i / 10, 100 + i))
        else:
            events.append(g.PoissonSampledDpEvent(0.001 + i / 10**6, g.GaussianDpEvent(1.0 + i / 1000)))
    single.append(("heterogeneous ledger (1000 distinct)", g.ComposedDpEvent(events), rel.REPLACE_SPECIAL))
    return single


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--queries", type=int, default=200, help="queries per run (fewer for a slow row)")
    ap.add_argument("--rows", default="", help="only the RDP rows whose name contains one of these (comma-separated)")
    ap.add_argument("--pld-grids", default="1e-3,1e-4", help="grids of the PLD rows (comma-separated; empty: none)")
    ap.add_argument("--pld-only", action="store_true", help="only the PLD rows")
    args = ap.parse_args(argv)
    if args.pld_grids:
        import dp_accounting as dpa

        pld_rows([float(g) for g in args.pld_grids.split(",")])
        pld_rows([float(g) for g in args.pld_grids.split(",")], event=mog_event(dpa), label="PLD, MoG(2; 0,1,2) x100, grid")
    if args.pld_only:
        return 0
    import dp_accounting as dpa
    from dp_accounting.rdp import RdpAccountant as Theirs

    from certify.accounting import RdpAccountant as Ours
    from certify.verify import verify_text

    delta = 1e-6
    head = f"{'event':<38} {'dp_acc ms':>9} {'float ms':>8} {'cert ms':>7} {'check ms':>8} {'ratio':>6} {'check/certify':>13}"
    print(f"{head}  {'eps dp_accounting':>18} {'eps certified':>16}")
    wanted = [w for w in args.rows.split(",") if w]
    for name, event, rel in cases(dpa):
        if wanted and not any(w in name for w in wanted):
            continue

        def theirs(_):
            a = Theirs(neighboring_relation=rel)
            a.compose(event)
            return a.get_epsilon(delta)

        def fresh():
            _clear()
            return Ours(neighboring_relation=rel)

        def ours(a):
            a.compose(event)
            return a.get_epsilon(delta)

        def answered():
            a = fresh()
            ours(a)
            return a

        def certificate(a):
            return a.certificate

        (t_dp, e_dp), (t_us, e_us), (t_cert, cert) = _time([(theirs, None), (ours, fresh), (certificate, answered)], args.runs, args.queries)
        text = cert.dumps()

        def check(_):
            return verify_text(text).exit_code

        ((t_ck, code),) = _time([(check, _clear)], args.runs, args.queries)
        assert code == 0, name
        total = t_us + t_cert
        print(f"{name:<38} {t_dp:9.3f} {t_us:8.3f} {t_cert:7.3f} {t_ck:8.3f} {t_dp / t_us:6.2f} {t_ck / total:13.2f}  {e_dp:18.10f} {e_us:16.10f}")
    return 0


def pld_ledger(dpa):
    g = dpa
    return g.ComposedDpEvent(
        [
            g.SelfComposedDpEvent(g.GaussianDpEvent(20.0), 300),
            g.SelfComposedDpEvent(g.LaplaceDpEvent(50.0), 200),
            g.SelfComposedDpEvent(g.PoissonSampledDpEvent(0.01, g.GaussianDpEvent(1.1)), 500),
        ]
    )


def mog_event(dpa):
    """User-level DP-SGD: a mixture of Gaussians (sensitivity 0, 1, 2 with dyadic probabilities that sum to 1 exactly as
    binary floats), 100 steps."""
    return dpa.SelfComposedDpEvent(dpa.dp_event.MixtureOfGaussiansDpEvent(2.0, [0.0, 1.0, 2.0], [0.75, 0.1875, 0.0625]), 100)


def _their_pld(event, h: float, pessimistic: bool):
    """dp_accounting's PLD of ``event`` (the events of these tables: Gaussian, Laplace, PoissonSampled Gaussian,
    MixtureOfGaussians, self-composed and composed) at grid ``h``, pessimistic (connect-the-dots, as its accountant
    builds it) or optimistic (privacy buckets: its connect-the-dots has no optimistic side), built the way its
    PLDAccountant builds each (its constructors, ``self_compose`` per count, ``compose`` across events)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    kw = {"value_discretization_interval": h, "pessimistic_estimate": pessimistic, "use_connect_dots": pessimistic}
    name = type(event).__name__
    if name == "ComposedDpEvent":
        out = None
        for e in event.events:
            one = _their_pld(e, h, pessimistic)
            out = one if out is None else out.compose(one)
        return out
    if name == "SelfComposedDpEvent":
        return _their_pld(event.event, h, pessimistic).self_compose(event.count)
    if name == "GaussianDpEvent":
        return pld.from_gaussian_mechanism(event.noise_multiplier, **kw)
    if name == "LaplaceDpEvent":
        return pld.from_laplace_mechanism(event.noise_multiplier, **kw)
    if name == "PoissonSampledDpEvent":
        return pld.from_gaussian_mechanism(event.event.noise_multiplier, sampling_prob=event.sampling_probability, **kw)
    if name == "MixtureOfGaussiansDpEvent":
        return pld.from_mixture_gaussian_mechanism(event.standard_deviation, event.sensitivities, event.sampling_probs, **kw)
    raise ValueError(f"no dp_accounting PLD for {name} in this benchmark")


def _theirs(event, h: float, delta: float, pessimistic: bool) -> tuple[float, float]:
    """(seconds, epsilon at ``delta``) of dp_accounting's PLD of ``event`` (:func:`_their_pld`)."""
    t0 = time.perf_counter()
    eps = _their_pld(event, h, pessimistic).get_epsilon_for_delta(delta)
    return time.perf_counter() - t0, eps


def pld_rows(grids, delta=1e-6, event=None, label="PLD, 1000-event ledger, grid") -> None:
    """The PLD rows of the module docstring (one run each: the certified run takes seconds); ``event`` (default: the
    1000-event ledger) and its ``label``. Columns: dp_accounting's pessimistic and optimistic runs (seconds), certify's
    two-sided run, certify over pessimistic and over both, their two estimates and the certified bracket."""
    import dp_accounting as dpa

    from certify.accounting import PLDAccountant as Ours
    from certify.balls import ball_endpoints
    from certify.pld import compose, ledger
    from certify.pld.accountant import one_steps
    from certify.verify import verify_text

    event = pld_ledger(dpa) if event is None else event
    print(
        f"{label:<30} {'pess s':>7} {'opt s':>7} {'certify s':>9} {'/pess':>6} {'/both':>6}  {'eps pess':>13} {'eps opt':>13} "
        f"{'certified bracket':>28}"
    )
    for h in grids:
        t_p, e_p = _theirs(event, h, delta, True)
        t_o, e_o = _theirs(event, h, delta, False)
        one_steps.cache_clear()
        ledger._one_steps.cache_clear()
        compose.clear_cache()
        t0 = time.perf_counter()
        b = Ours(value_discretization_interval=h)
        b.compose(event)
        e_us = b.get_epsilon(delta)
        t_us = time.perf_counter() - t0
        lo = float(ball_endpoints(b.certificate.quantities["epsilon_lower"].value)[0])
        method = "fft" if "fft" in b.certificate.witnesses else "exact"
        one_steps.cache_clear()
        ledger._one_steps.cache_clear()
        compose.clear_cache()
        text = b.certificate.dumps()
        t0 = time.perf_counter()
        ok = verify_text(text).ok
        t_v = time.perf_counter() - t0
        print(
            f"{'  h = ' + repr(h):<30} {t_p:7.2f} {t_o:7.2f} {t_us:9.2f} {t_us / t_p:6.1f} {t_us / (t_p + t_o):6.2f}  {e_p:13.8f} {e_o:13.8f} "
            f"  [{lo:.8f}, {e_us:.8f}] {method}, verify {t_v:.2f} s ({t_v / t_us:.2f}x, {'accepted' if ok else 'REFUSED'})"
        )


if __name__ == "__main__":
    raise SystemExit(main())
