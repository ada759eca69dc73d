"""`certify rho` and `certify dpsgd`: the certified Rényi accountant of Bok (2026) on the command line."""

from __future__ import annotations

import argparse

from ..balls import InputError, exact_int, exact_str, float_of, fmpq, lower_decimal, upper_decimal, exact_flag, int_flag
from ..limits import cap
from ..contract import FIXED_SIZE_REPLACE_ONE
from .. import cli
from ..poisson.commands import add_contract_options, derivation_line, emit, run_contract
from ..poisson.schedule import Phase
from ..validators import steps_of_epochs
from .problem import Problem, check_baseline_sigma, parse_alpha, parse_batch, parse_delta, parse_p, parse_sigma, parse_steps

_SAMPLING_HELP = "sampling rate p = b/n in (0, 1), exact (0.01, 1/100); or give --batch-size and --dataset-size instead (p = b/n exactly)"

_ACCOUNTANT_TEXT = """\
One DP-SGD step with fixed-size batches (b of n drawn without replacement, replace-one adjacency,
Gaussian noise sigma*C on the sum of clipped gradients) has the order-alpha Rényi bound
rho(alpha, p, 2/sigma) of Bok (2026), Theorem 1 / (5): the maximum over u in [0, 1/2] of the Rényi
divergence J(u) between two 2-D Gaussian mixtures. It is certified in Arb ball arithmetic: u = 0 in
closed form; Proposition 2 (a)/(b) skip the search when they are proved; otherwise a branch-and-bound
over u (App. B.2) with rigorous point bounds (App. B.3.1: the summed integrand of (35) integrated by
the trapezoidal rule on the real line, with a closed-form bound of its discretisation error and
Gaussian bounds of the truncated tails) and curvature bounds (App. B.3.2). Every printed bound
is an outward-rounded ball endpoint; --json prints the certificate that `certify verify` re-checks
leaf by leaf without re-running the search.
"""


def _p_from(args) -> tuple:
    """(p, extra inputs) from --sampling-rate or --batch-size/--dataset-size."""
    has_p = args.sampling_rate is not None
    has_b = args.batch_size is not None or args.dataset_size is not None
    if has_p and has_b:
        raise InputError("--sampling-rate", "give either --sampling-rate or --batch-size with --dataset-size, not both")
    if has_b:
        if args.batch_size is None or args.dataset_size is None:
            raise InputError("--batch-size", "--batch-size and --dataset-size go together")
        p = parse_batch(args.batch_size, args.dataset_size)
        b, n = (exact_int(v, flag) for v, flag in ((args.batch_size, "--batch-size"), (args.dataset_size, "--dataset-size")))
        return p, {"batch_size": str(b), "dataset_size": str(n)}  # recorded as certify spells integers, however typed
    if not has_p:
        raise InputError("--sampling-rate", "required (or --batch-size with --dataset-size)")
    return parse_p(args.sampling_rate), {}


def _gamma(args):
    if args.gamma is None:
        return None
    from .certificates import parse_gamma

    return parse_gamma(args.gamma, "--gamma")


def grid_arg(text: str) -> str:
    """``--grid``: :func:`certify.pld.accountant.grid_arg` (imported when the option is given)."""
    from ..pld.accountant import grid_arg as parse

    return parse(text)


def _budget(args):
    """search.budget(...) from --max-evaluations / --max-seconds (defaults: search.MAX_EVALUATIONS, MAX_SECONDS)."""
    from ..balls import exact, exact_int
    from .search import MAX_EVALUATIONS, MAX_SECONDS, SearchLimits, budget

    n = MAX_EVALUATIONS if args.max_evaluations is None else exact_int(args.max_evaluations, "--max-evaluations")
    t = fmpq(MAX_SECONDS) if args.max_seconds is None else exact(args.max_seconds, "--max-seconds")
    return budget(SearchLimits(n, t))  # checked there (search.search_limits)


def _stopped_early(out) -> bool:
    return out.facts.stopped_early


def _stopped_line(out) -> list[str]:
    if not _stopped_early(out):
        return []
    w = out.witness
    why = {
        "evaluations": f"its evaluation budget ({w.budget.max_evaluations} point evaluations, --max-evaluations)",
        "seconds": f"its time budget ({exact_str(w.budget.max_seconds)} s, --max-seconds; a machine-dependent stop)",
        "resolution": "the finest interval width (the point bounds cannot resolve the gap)",
    }
    why = why.get(w.stopped_by, "its budget")
    return [
        f"  STOPPED EARLY at {why}: the bound is valid but its gap {upper_decimal(out.facts.gap, 3)} "
        f"exceeds the tolerance gamma = {exact_str(w.gamma)} (exit status 6)"
    ]


def _where(out) -> str:
    f = out.facts
    if f.method == "prop2a":
        return "u = 0 (Proposition 2 (a), (19), proved in balls: no search)"
    if f.method == "small-p":
        return "u = 1/2 (small-p route: p^2 term of Proposition 5 with a rigorous third-order remainder, no search)"
    if f.method == "prop2b":
        return f"u = {f.u_star} (Proposition 2 (b) proved in balls: only u = 0 and u = 1/2 evaluated)"
    l, r = f.leaf
    return (
        f"u* = {f.u_star} gives the lower bound; the largest leaf key is on [{exact_str(l)}, {exact_str(r)}] "
        f"({f.leaves} leaves, {out.witness.evaluations or 'cached'} point evaluations)"
    )


def _width(out) -> str:
    b = out.certificate.budget
    parts = [f"{k}: {v}" for k, v in b.items()]
    return "; ".join(parts)


def _search_lines(out) -> list[str]:
    """The summary lines every rho search prints: where the maximum is, the bracket width, how the search ended."""
    return [f"  maximiser: {_where(out)}", f"  width: {_width(out)}", *_stopped_line(out), f"  ({out.seconds:.3f} s, rho from {out.source})"]


def _summary_rho(out) -> str:
    q = out.certificate.quantities
    rho = q["rho"].value
    lines = [
        f"rho(alpha={out.certificate.inputs['alpha']}, p={out.certificate.inputs['sampling_rate']}, "
        f"sigma={out.certificate.inputs['noise_multiplier']}) in [{lower_decimal(rho, 10)}, {upper_decimal(rho, 10)}]",
        *_search_lines(out),
    ]
    return "\n".join(lines) + "\n"


def _summary_dpsgd(out) -> str:
    c = out.certificate
    q = c.quantities
    eps, rho = q["epsilon"].value, q["rho"].value
    chosen = "chosen by float estimates + unimodality (Prop. 3)" if out.alpha_evaluations else "fixed by --alpha"
    lines = [
        f"DP-SGD with p={c.inputs['sampling_rate']}, sigma={c.inputs['noise_multiplier']}, T={c.inputs['steps']} "
        f"steps is (epsilon, delta={c.inputs['delta']})-DP with",
        f"  {FIXED_SIZE_REPLACE_ONE.statement()}",
        f"  epsilon <= {upper_decimal(eps, 6)}   (Corollary 1 / (6); to 2 decimals rounded up: epsilon <= "
        f"{_two_decimals(eps, up=True)}; as the paper prints it (nearest, not a bound): {_two_decimals(eps, up=None)})",
        f"  alpha = {c.inputs['alpha']} ({chosen})",
        f"  rho(alpha) in [{lower_decimal(rho, 10)}, {upper_decimal(rho, 10)}]",
        *_search_lines(out),
    ]
    return "\n".join(lines) + "\n"


def _two_decimals(x, up) -> str:
    """A ball's endpoint to 2 decimals: up=True the upper endpoint rounded up (a bound), up=False the lower endpoint
    rounded down (a bound), up=None the upper endpoint rounded to nearest the way the paper prints (NOT a bound)."""
    from ..balls import fmpq

    v = (x.lower() if up is False else x.upper()).fmpq() * 100
    n = int(v.ceil()) if up is True else int(v.floor()) if up is False else int((v + fmpq(1, 2)).floor())
    sign, n = ("-" if n < 0 else ""), abs(n)
    return f"{sign}{n // 100}.{n % 100:02d}"


#: which input drives a quantity out of the exact range (cli.check_range), and what is admissible
RANGE_HINTS = {
    name: ("--sampling-rate", "p and 1/sigma not both astronomically small: rho and epsilon must stay above 1e-315652") for name in ("rho", "epsilon")
}


def cmd_rho(args) -> int:
    from .accountant import certify_rho  # the branch-and-bound: imported by the commands that run it only

    prob = Problem(parse_alpha(args.alpha), *(_p_from(args)[:1]), parse_sigma(args.noise_multiplier))
    with _budget(args):
        out = certify_rho(prob, _gamma(args), args.cache_dir)
    cli.check_range(out.certificate, RANGE_HINTS)
    cli.emit(out.certificate, _summary_rho(out), args)
    return cli.EXIT_STOPPED_EARLY if _stopped_early(out) else 0


def cmd_dpsgd(args) -> int:
    for flag in ("grid", "composition"):  # PLD settings are refused with another accountant, not silently ignored
        if getattr(args, flag, None) is not None and getattr(args, "accountant", None) != "pld":
            raise InputError(f"--{flag}", "is an option of --accountant pld only")
    status = run_contract(args)  # poisson + add-remove is certified there; fixed-size + replace-one continues here
    if status is not None:
        return status
    p, extra = _p_from(args)
    sigma = parse_sigma(args.noise_multiplier)
    if args.epochs is not None:  # T = floor(E/p), p = b/n exactly: Opacus's count, recorded as the input epochs
        e, steps = steps_of_epochs(args.epochs, p)
        extra["epochs"] = str(e)
        args.derivation = tuple(extra.items())
        args.derivation_note = derivation_line(extra, Phase(p, sigma, steps), fixed_size=True)
    else:
        steps = parse_steps(args.steps)
    delta = parse_delta(args.delta)
    if args.accountant == "pld":
        from ..pld.commands import run_pld
        from ..progress import ticking

        with ticking("dpsgd --accountant pld"):
            return run_pld(args, args.contract, p, sigma, steps, delta)
    alpha = None if args.alpha is None else parse_alpha(args.alpha)
    if args.accountant != "bok":
        return _cmd_baseline(args, p, sigma, steps, delta, alpha, extra)
    from .accountant import certify_dpsgd  # the branch-and-bound: not imported for the other accountants

    with _budget(args):
        out = certify_dpsgd(p, sigma, steps, delta, alpha, _gamma(args), args.cache_dir, extra)
    cli.check_range(out.certificate, RANGE_HINTS)
    emit(out.certificate, _summary_dpsgd(out), args)
    return cli.EXIT_STOPPED_EARLY if _stopped_early(out) else 0


def _cmd_baseline(args, p, sigma, steps, delta, alpha, extra) -> int:
    """--accountant wang|birrell (certified, with a certificate) or lossless (a float estimate, no certificate)."""
    import json
    import sys

    from ..balls import InputError, exact_str, lower_decimal, upper_decimal

    head = (
        f"DP-SGD with p={exact_str(p)}, sigma={exact_str(sigma)}, T={steps} steps, delta={exact_str(delta)}\n  {FIXED_SIZE_REPLACE_ONE.statement()}"
    )
    if args.accountant == "lossless":
        if args.out:
            raise InputError("--out", "the lossless column is a float estimate: no certificate is written")
        from .baselines.lossless import epsilon_lossless

        est = epsilon_lossless(float_of(p), float_of(sigma), steps, float_of(delta))  # an estimate, not certified
        if args.json:
            sys.stdout.write(
                json.dumps(
                    {
                        "accountant": "lossless",
                        "certified": False,
                        "epsilon_estimate": repr(est),
                        "inputs": {
                            "sampling_rate": exact_str(p),
                            "noise_multiplier": exact_str(sigma),
                            "steps": str(steps),
                            "delta": exact_str(delta),
                        },
                    },
                    indent=2,
                )
                + "\n"
            )
        else:
            sys.stdout.write(
                f"{head}\n  epsilon ~ {est:.6f}  (lossless PLD accountant: float FFT composition, an ESTIMATE, not certified; no certificate)\n"
            )
        return 0
    from .baselines.certificates import certify_baseline

    check_baseline_sigma(sigma)
    cert = certify_baseline(args.accountant, p, sigma, steps, delta, alpha, extra)
    cli.check_range(cert, RANGE_HINTS)
    q = cert.quantities
    a = int(q["alpha"].value.mid().fmpq().p)
    e = q["epsilon"].value
    name = {"wang": "Wang et al. (dp_accounting's fixed-size replace-one RDP)", "birrell": "Birrell et al. Theorem 3.4 (min over m in {3, 4, 5})"}[
        args.accountant
    ]
    summary = (
        f"{head}\n  accountant: {name}, certified in balls\n"
        f"  epsilon in [{lower_decimal(e, 6)}, {upper_decimal(e, 6)}] "
        + (f"(at the given alpha = {a}; " if alpha is not None else f"(min over alpha, smallest at alpha = {a}; ")
        + "the upper endpoint is the certified epsilon)\n"
    )
    emit(cert, summary, args)
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sampling-rate", type=cli.exact_text, metavar="P", help=_SAMPLING_HELP)
    p.add_argument("--batch-size", type=cli.exact_text, metavar="B", help="batch size b (integer, 1 <= b < n)")
    p.add_argument("--dataset-size", type=cli.exact_text, metavar="n", help="dataset size n (integer)")
    p.add_argument(
        "--noise-multiplier",
        type=cli.exact_text,
        required=True,
        metavar="SIGMA",
        help="noise multiplier sigma > 0 (noise std sigma*C; Delta = 2/sigma under replace-one)",
    )
    p.add_argument(
        "--gamma",
        type=cli.exact_text,
        metavar="G",
        help="branch-and-bound tolerance on rho (default: a power of two <= 1e-7 * J(0), far below what moves a printed epsilon)",
    )
    p.add_argument(
        "--max-evaluations",
        type=int_flag(2, cap("bb_evaluations")),
        metavar="N",
        help="branch-and-bound budget: at most N point evaluations (default 2000, a few seconds; "
        "deterministic). A search that stops at its budget before reaching gamma says STOPPED "
        "EARLY, records stopped_early in the certificate (the bound is valid, only looser) and exits 6",
    )
    p.add_argument(
        "--max-seconds",
        type=exact_flag(0),
        metavar="S",
        help="wall-clock safety net of the branch-and-bound (default 60 s); a stop by time depends on the "
        "machine, so prefer --max-evaluations for reproducible certificates",
    )
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="on-disk rho cache keyed by the exact inputs (default: $CERTIFY_CACHE_DIR if set; cached witnesses are re-checked before use)",
    )
    cli.add_output_options(p)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "rho",
        help="certify the one-step Rényi bound rho(alpha, p, 2/sigma) of Bok (2026) (5), sigma the noise multiplier",
        description=_ACCOUNTANT_TEXT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example: certify rho --alpha 8 --sampling-rate 0.01 --noise-multiplier 2",
    )
    p.add_argument("--alpha", type=cli.exact_text, required=True, metavar="A", help="integer Rényi order, 2 <= A <= 256")
    _common(p)
    p.set_defaults(func=cmd_rho)

    d = subparsers.add_parser(
        "dpsgd",
        help="certify (epsilon, delta) of DP-SGD by Bok (2026) Corollary 1 / (6)",
        description=_ACCOUNTANT_TEXT + "\nepsilon = T rho(alpha) + log(1 - 1/alpha) - (log delta + log alpha)/(alpha - 1)"
        " (Corollary 1 / (6)); alpha is chosen by float estimates using unimodality (Proposition 3), "
        "then certified at that alpha only (any alpha is valid).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example: certify dpsgd --sampling-rate 0.01 --noise-multiplier 2 --steps 1000 --delta 1e-6",
    )
    d.add_argument("--steps", type=cli.exact_text, required=True, metavar="T", help="number of DP-SGD steps T >= 1")
    d.add_argument("--delta", type=cli.exact_text, required=True, metavar="DELTA", help="delta in (0, 1), exact (1e-6)")
    d.add_argument("--alpha", type=cli.exact_text, metavar="A", help="fix the Rényi order (integer in [2, 256]) instead of choosing it")
    d.add_argument(
        "--accountant",
        choices=["bok", "wang", "birrell", "lossless", "pld", "renyi"],
        default="bok",
        help="fixed-size + replace-one: bok (default: the certified accountant of the paper), wang or "
        "birrell (baselines, certified), lossless (PLD, a float estimate, no certificate), pld "
        "(certified PLD); poisson + add-remove: renyi (default; Mironov-Talwar-Zhang) or pld",
    )
    d.add_argument(
        "--grid",
        type=grid_arg,
        metavar="H",
        default=None,
        help="--accountant pld: loss-grid spacing h > 0, <= 1/2 (default: the accountant chooses the finest grid from "
        "1e-4, the published column's, upward that fits its limits)",
    )
    d.add_argument(
        "--composition",
        choices=["fft", "exact"],
        default=None,
        help="--accountant pld: how the T steps are composed: fft (a tilted float FFT with a proven error bound) or "
        "exact (integer products along an addition chain). "
        "Default: fft for 1e4 <= T <= 1e7, exact otherwise",
    )
    _common(d)
    add_contract_options(d)
    d.set_defaults(func=cmd_dpsgd)
