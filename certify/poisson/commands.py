"""The accounting-contract options of ``certify dpsgd`` and its Poisson + add/remove branch.

``certify dpsgd`` (in :mod:`certify.dpsgd.commands`) calls :func:`add_contract_options` when it builds
its parser and :func:`run_contract` first thing when it runs: under poisson + add-remove this module
certifies and prints the answer (returns the exit status); under fixed-size + replace-one it returns
None and Bok's accountant runs as before (a one-phase ``--schedule`` is unpacked into the usual options),
except for a ``--schedule`` of several phases, certified here by :mod:`certify.poisson.fixed_size`
(kind ``dpsgd/renyi-bok-schedule``).
"""

from __future__ import annotations

import argparse
import time

from .. import cli
from ..balls import InputError, exact, exact_str, lower_decimal, upper_decimal
from ..contract import FIXED_SIZE_REPLACE_ONE, POISSON_ADD_REMOVE, Contract, parse_contract
from .accountant import certify_poisson
from .certificates import parse_alpha
from .ecosystem import load_opacus_history
from .schedule import Schedule, load_schedule, opacus_epochs, parse_delta, single

CONTRACT_HELP = """\
accounting contract (required: no default; stated in every summary and certificate):
  --sampling poisson     (implies --adjacency add-remove) the contract of Opacus, TF Privacy and dp_accounting's
                         DP-SGD: the Rényi accountant of the Poisson-subsampled Gaussian (Mironov, Talwar, Zhang
                         2019), or --accountant pld; --schedule and --opacus-history give several phases;
                         --batch-size/--dataset-size/--epochs count q = 1/ceil(n/b) and T = floor(E/q) as Opacus does
  --sampling fixed-size  (implies --adjacency replace-one) Bok's paper: batches of b of n drawn without replacement;
                         accountants bok (default), wang, birrell, lossless, pld; a --schedule of several phases
                         composes Bok's per-phase rho at one alpha (kind dpsgd/renyi-bok-schedule);
                         --epochs E counts T = floor(E/p) with p = b/n exactly
  an --opacus-history, or a --schedule file that declares {"contract": ...}, needs no flag;
  other combinations, and shuffled batches, are refused (exit 2)
"""

#: the one line printed when no contract is given (certify dpsgd has no silent default)
NO_CONTRACT = (
    "no accounting contract given: add --sampling poisson (Opacus, TF Privacy and dp_accounting's DP-SGD: poisson + "
    "add-remove) or --sampling fixed-size (Bok's paper: fixed-size + replace-one); a schedule file may declare it instead"
)


def add_contract_options(d: argparse.ArgumentParser) -> None:
    """Add --sampling, --adjacency, --schedule, --opacus-history to the ``certify dpsgd`` parser."""
    g = d.add_argument_group("accounting contract", CONTRACT_HELP)
    g.add_argument("--sampling", metavar="S", default=None, help="poisson or fixed-size (no default; with --opacus-history: poisson)")
    g.add_argument(
        "--adjacency", metavar="A", default=None, help="add-remove or replace-one (implied by --sampling; with --opacus-history: add-remove)"
    )
    g.add_argument(
        "--epochs",
        type=cli.exact_text,
        metavar="E",
        help="instead of --steps, T = floor(E/q) steps (Opacus's count, any accountant). poisson: with --batch-size and "
        "--dataset-size q = 1/ceil(n/b) as Opacus's DPDataLoader, so T = E ceil(n/b); fixed-size: p = b/n exactly, "
        "T = floor(E n/b). Recorded in the certificate (pld/dpsgd records q and T; the summary says how they were counted)",
    )
    g.add_argument(
        "--schedule",
        metavar="FILE",
        help="phases of (sampling_rate, noise_multiplier, steps): JSON list / {contract, phases} "
        "object, or CSV with header sampling_rate,noise_multiplier,steps",
    )
    g.add_argument(
        "--opacus-history",
        metavar="FILE",
        help="an Opacus accountant history or state dict saved as JSON "
        '([[noise_multiplier, sample_rate, num_steps], ...] or {"history": [...]}); floats '
        "are taken at their exact binary value (noted in the certificate)",
    )
    g.add_argument(
        "--fractional-orders",
        choices=["chord", "integral"],
        default=None,
        help="poisson: how a fractional alpha is bounded: integral (the default, unless the run has so many distinct "
        "phases that checking would take over 2 s: the defining integral in balls, as tight as the float libraries' "
        "fractional orders; checking repeats a quadrature per distinct (q, sigma)) or chord (the convexity chord, "
        "cheap to check, looser where the best order is below 2)",
    )
    for action in d._actions:  # the phases may come from a file: checked in run_contract instead
        if action.dest in ("noise_multiplier", "steps"):
            action.required = False
    d.set_defaults(accountant=None, emit=emit)


def _contract(args) -> Contract | None:
    """The contract the flags ask for: explicit options (one of --sampling / --adjacency implies the other: the
    one certified contract with it), else implied by --opacus-history, else None for a --schedule file (it may
    declare one); nothing at all is refused (:data:`NO_CONTRACT`: there is no silent default)."""
    if args.sampling is None and args.adjacency is None:
        if args.opacus_history:
            return POISSON_ADD_REMOVE
        if args.schedule:
            return None  # the file may declare it (a file that does not is refused after reading)
        raise InputError("--sampling", NO_CONTRACT)
    for flag, value in (("--sampling", args.sampling), ("--adjacency", args.adjacency)):
        if value is not None and not str(value).strip():
            raise InputError(flag, "is empty: give poisson or fixed-size (--sampling), add-remove or replace-one (--adjacency)")
    sampling, adjacency = args.sampling, args.adjacency
    implied = {"poisson": "add-remove", "fixed-size": "replace-one"}
    if adjacency is None:
        adjacency = implied.get(str(sampling).strip().lower(), FIXED_SIZE_REPLACE_ONE.adjacency)
    if sampling is None:
        sampling = {v: k for k, v in implied.items()}.get(str(adjacency).strip().lower(), FIXED_SIZE_REPLACE_ONE.sampling)
    return parse_contract(sampling, adjacency)


def resolve_contract(args) -> tuple[Contract, Schedule | None]:
    """The accounting contract of ``certify dpsgd``, resolved once from whatever declares it (the flags, a
    --schedule file, an Opacus history), with the schedule when a file or the Poisson branch reads one; every
    accountant reads this resolution (``args.contract``), never the flags' defaults."""
    contract = _contract(args)
    sch = None
    if contract is None or contract == POISSON_ADD_REMOVE or args.opacus_history or args.schedule:
        sch = _schedule(args, contract)
        contract = sch.contract
    args.contract = contract
    return contract, sch


def _schedule(args, contract: Contract | None) -> Schedule:
    files = [n for n, v in (("--schedule", args.schedule), ("--opacus-history", args.opacus_history)) if v]
    if len(files) == 2:
        raise InputError("--schedule", "give either --schedule or --opacus-history, not both")
    if files:
        inline = [
            n
            for n, v in (
                ("--sampling-rate", args.sampling_rate),
                ("--noise-multiplier", args.noise_multiplier),
                ("--steps", args.steps),
                ("--batch-size", args.batch_size),
                ("--dataset-size", args.dataset_size),
                ("--epochs", args.epochs),
            )
            if v is not None
        ]
        if inline:
            raise InputError(inline[0], f"the phases come from {files[0]}: do not also give {inline[0]}")
        if args.opacus_history:
            sch = load_opacus_history(args.opacus_history)
            if contract is not None and contract != sch.contract:
                raise InputError(
                    "--sampling",
                    f"an Opacus history is accounted as poisson + add-remove, not "
                    f"{contract.sampling} + {contract.adjacency}: mixed contracts are refused",
                )
            return sch
        return load_schedule(args.schedule, contract=contract, default=None if contract is None else contract)
    if args.noise_multiplier is None:
        raise InputError("--noise-multiplier", "required (or give --schedule FILE / --opacus-history FILE)")
    q, t, derivation = opacus_epochs(args.batch_size, args.dataset_size, args.epochs, args.sampling_rate, args.steps)
    sch = single(q, args.noise_multiplier, t, contract)
    return Schedule(sch.contract, sch.phases, sch.notes, sch.source, derivation)


def run_contract(args) -> int | None:
    """Dispatch ``certify dpsgd`` by contract: run the Poisson branch (exit status) or return None."""
    contract, sch = resolve_contract(args)
    if contract == FIXED_SIZE_REPLACE_ONE:
        parse_contract(contract.sampling, contract.adjacency, args.accountant if args.accountant != "lossless" else None)
        if sch is not None and len(sch.phases) > 1:  # Rényi composition of Bok's per-phase rho at one alpha
            from .fixed_size import run as run_fixed_size

            for n, v in (("--delta", args.delta),):
                if v is None:
                    raise InputError(n, "required")
            return run_fixed_size(args, sch)
        if sch is not None:  # a one-phase fixed-size schedule file: unpack it into the usual options
            ph = sch.phases[0]
            args.sampling_rate = exact_str(ph.sampling_rate)
            args.noise_multiplier = exact_str(ph.noise_multiplier)
            args.steps = str(ph.steps)
        if args.noise_multiplier is None:
            raise InputError("--noise-multiplier", "required")
        if args.steps is None and args.epochs is None:
            raise InputError("--steps", "required (or --epochs: T = floor(E/p) with p = b/n, as Opacus counts)")
        if args.steps is not None and args.epochs is not None:
            raise InputError("--epochs", "give either --epochs or --steps, not both")
        if args.accountant is None:
            args.accountant = "bok"
        return None
    # poisson + add-remove
    if args.accountant == "pld":  # the certified PLD accountant (one phase)
        if len(sch.phases) != 1:
            raise InputError("--schedule", f"the certified PLD accountant takes one phase, got {len(sch.phases)}")
        if args.alpha is not None:
            raise InputError("--alpha", "is a setting of the Rényi accountant; the PLD accountant has none")
        from ..pld.commands import run_pld
        from ..progress import ticking

        ph = sch.phases[0]
        if sch.derivation:  # q and T are the certificate's inputs; how they were counted is said in the summary
            args.derivation, args.derivation_note = sch.derivation, derivation_line(dict(sch.derivation), ph)
        with ticking("dpsgd --accountant pld"):
            return run_pld(args, contract, ph.sampling_rate, ph.noise_multiplier, ph.steps, parse_delta(args.delta))
    if args.accountant not in (None, "renyi"):
        raise InputError(
            "--accountant",
            f"{args.accountant!r} does not certify poisson + add-remove (the Rényi "
            "accountant of the Poisson-subsampled Gaussian is used by default; or --accountant pld)",
        )
    if getattr(args, "gamma", None) is not None:
        raise InputError("--gamma", "is a setting of Bok's fixed-size accountant; the Poisson accountant has none")
    delta = parse_delta(args.delta)
    alpha = None if args.alpha is None else parse_alpha(args.alpha)
    t0 = time.perf_counter()
    cert = certify_poisson(sch, delta, alpha, fractional=args.fractional_orders)
    emit(cert, summary(cert, sch, time.perf_counter() - t0, alpha is None), args)
    return 0


_ACCOUNTANT_OF_KIND = {"dpsgd/renyi-poisson": "renyi", "pld/dpsgd": "pld", "dpsgd/renyi-bok": "bok", "dpsgd/renyi-bok-schedule": "bok"}


def compact_summary(cert, args) -> dict:
    """The compact ``--json`` of ``certify dpsgd``: the bounds as outward decimals (10 digits), the contract, the
    accountant, the run, and the certificate's path (``--out``; null without it: the summary is not a certificate)."""
    i, q = cert.inputs, cert.quantities
    d = {
        "kind": cert.kind,
        "accountant": _ACCOUNTANT_OF_KIND.get(cert.kind) or getattr(args, "accountant", None),
        "contract": {"sampling": i.get("sampling"), "adjacency": i.get("adjacency")},
        "delta": i.get("delta"),
    }
    if "epsilon_upper" in q:  # the PLD: a two-sided bracket
        d["epsilon_upper"] = upper_decimal(q["epsilon_upper"].value, 10)
        d["epsilon_lower"] = lower_decimal(q["epsilon_lower"].value, 10)
    else:
        d["epsilon_upper"] = upper_decimal(q["epsilon"].value, 10)
    alpha = cert.witnesses.get("alpha", i.get("alpha"))
    if alpha is not None:
        d["alpha"] = alpha
    run = {k: i[k] for k in ("sampling_rate", "noise_multiplier", "steps", "phases", "batch_size", "dataset_size", "epochs", "grid") if k in i}
    if i.get("phases") == "1":
        run.update({k.split(".", 1)[1]: i[k] for k in ("phase[0].sampling_rate", "phase[0].noise_multiplier", "phase[0].steps")})
    for k, v in getattr(args, "derivation", ()) or ():  # counted by the command, not recorded by this kind (pld/dpsgd)
        run.setdefault(k, v)
    d["run"] = run
    d["certificate"] = getattr(args, "out", None)
    return d


def emit(cert, summary_text: str, args) -> None:
    """:func:`certify.cli.emit` for ``certify dpsgd``: ``--json`` prints :func:`compact_summary` (the certificate goes
    to ``--out``), otherwise the summary; ``--out`` writes the certificate either way."""
    import json
    import sys

    note = getattr(args, "derivation_note", None)
    if note and note not in summary_text:  # how q and T were counted from --epochs / --batch-size (its first line names the run)
        head, _, rest = summary_text.partition("\n")
        summary_text = f"{head}\n  {note}\n{rest}"
    if not getattr(args, "json", False):
        cli.emit(cert, summary_text, args)
        return
    if getattr(args, "out", None):
        cli.write_atomically(args.out, cert.dumps())
    sys.stdout.write(json.dumps(compact_summary(cert, args), indent=2) + "\n")


def _show(x) -> str:
    """Exact text when short, else a 10-digit decimal (the certificate holds the exact value)."""
    t = exact_str(x)
    return t if len(t) <= 24 else f"~{lower_decimal(x, 10)}"


def derivation_line(d: dict, ph, fixed_size: bool = False) -> str:
    """How q and T were counted from --batch-size / --dataset-size / --epochs (Opacus's rule), in words: under Poisson
    q = 1/ceil(n/b) (Opacus's DPDataLoader), under fixed-size p = b/n (every batch has b of the n examples); then
    T = floor(E/q) (``get_noise_multiplier(epochs=E)``)."""
    parts = []
    if "batch_size" in d:
        b, n, q = d["batch_size"], d["dataset_size"], exact_str(ph.sampling_rate)
        parts.append(f"p = {b}/{n} = {q} (batches of {b} of {n})" if fixed_size else f"q = 1/ceil({n}/{b}) = {q} (batches of {b} of {n})")
    if "epochs" in d:
        parts.append(f"T = floor({d['epochs']} epochs / {'p' if fixed_size else 'q'}) = {ph.steps} steps")
    return "counted as Opacus counts: " + "; ".join(parts)


def summary(cert, sch: Schedule, seconds: float, chosen: bool) -> str:
    q = cert.quantities
    eps = q["epsilon"].value
    a = cert.witnesses["alpha"]
    if len(sch.phases) == 1:
        ph = sch.phases[0]
        run = f"q={_show(ph.sampling_rate)}, sigma={_show(ph.noise_multiplier)}, T={ph.steps} steps"
    else:
        run = f"{len(sch.phases)} phases, {sch.total_steps} steps in all ({sch.source})"
    how = "chosen by float estimates" if chosen else "fixed by --alpha"
    if "/" in a:
        how += (
            "; fractional: the defining integral in balls (or the chord if smaller)"
            if cert.witnesses.get("fractional") == "integral"
            else "; fractional: chord of K(alpha) between the neighbouring integers"
        )
    lines = [
        f"DP-SGD ({run}) is (epsilon, delta={_show(exact(cert.inputs['delta']))})-DP with",
        f"  epsilon <= {upper_decimal(eps, 6)}   (certified upper bound; ball [{lower_decimal(eps, 10)}, {upper_decimal(eps, 10)}])",
        "  accountant: Rényi DP of the Poisson-subsampled Gaussian (Mironov, Talwar, Zhang 2019), composed over "
        "all steps, converted by Balle et al. 2020 Thm 21",
        f"  alpha = {a} ({how})",
        *(["  (the conversion gives a negative epsilon: the run is in particular (0, delta)-DP)"] if eps.upper() < 0 else []),
        f"  {sch.contract.statement()}",
        "  not covered: shuffled batches (a permutation cut into batches is not Poisson sampling); hyperparameter search on private data",
    ]
    if sch.derivation:
        lines.insert(1, f"  {derivation_line(dict(sch.derivation), sch.phases[0])}")
    if sch.notes:
        lines.append(f"  {len(sch.notes)} input(s) were binary floats, taken at their exact binary value (noted in the certificate)")
    lines.append(f"  ({seconds * 1e3:.1f} ms)")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# certify calibrate-dpsgd
# --------------------------------------------------------------------------------------------
def register(sub) -> None:
    p = sub.add_parser(
        "calibrate-dpsgd",
        help="calibrate the smallest certified noise multiplier to a DP-SGD (epsilon, delta) target (poisson + add-remove)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Returns exact dyadic noise multipliers s_fail < s_pass, relative width <= 1e-4: s_pass certified to\n"
            "meet (epsilon, delta) and s_fail certified not to, by the same accountant (Rényi DP of the\n"
            "Poisson-subsampled Gaussian, min over the integer orders 2..256, a grid to 4096 and the sixteenths\n"
            "between 1 and 16; or, with --accountant pld, the certified PLD accountant, width <= 1e-3). epsilon is\n"
            "non-increasing in the noise multiplier sigma (proof obligation P-sigma-monotone, `certify proofs\n"
            "--paper mtz-poisson`), so s_pass is the smallest passing sigma of this accountant up to the bracket.\n\n"
            "Exit status: 0 bracket certified; 2 bad input (including an unreachable target or an uncovered\n"
            "contract); 3 undecided at the highest precision."
        ),
        epilog="example: certify calibrate-dpsgd --epsilon 1 --delta 1e-5 --steps 1000 --sampling-rate 0.01",
    )
    p.add_argument("--epsilon", type=cli.exact_text, required=True, metavar="E", help="target epsilon in (0, 1e6]")
    p.add_argument("--delta", type=cli.exact_text, required=True, metavar="D", help="delta in (0, 1)")
    p.add_argument("--steps", type=cli.exact_text, required=True, metavar="T", help="number of steps T >= 1")
    p.add_argument("--sampling-rate", type=cli.exact_text, required=True, metavar="Q", help="q in (0, 1]")
    p.add_argument("--sampling", default="poisson", metavar="S", help="sampling scheme (default poisson; the only one calibrated)")
    p.add_argument("--adjacency", default="add-remove", metavar="A", help="adjacency (default add-remove)")
    p.add_argument(
        "--accountant",
        choices=["renyi", "pld"],
        default="renyi",
        help="renyi (default: the Rényi accountant, bracket width <= 1e-4, under a second) or pld (the certified PLD "
        "accountant: 4-7%% less noise, bracket width <= 1e-3, a certified query per step of a bisection: seconds to minutes)",
    )
    p.add_argument(
        "--orders",
        choices=["fractional", "integer"],
        default="fractional",
        help="renyi: the orders of the accountant: fractional (default: the integers 2..4096 of the grid and the sixteenths "
        "between 1 and 16, as tight as the float libraries) or integer (the grid's integers only)",
    )
    p.add_argument("--grid", type=cli.exact_text, metavar="H", default="1e-4", help="pld: loss-grid spacing (default 1e-4)")
    p.add_argument("--json", action="store_true", help="print {s_fail, s_pass, pass and fail certificates} as JSON")
    p.add_argument("--out", metavar="FILE", help="write the passing certificate (dpsgd/renyi-poisson or pld/dpsgd) to FILE")
    p.add_argument("--out-fail", metavar="FILE", help="write the failing certificate (dpsgd/renyi-poisson-fails or pld/dpsgd) to FILE")
    p.set_defaults(func=cmd_calibrate)


def cmd_calibrate(args) -> int:
    import json
    import sys

    from .calibrate import calibrate, parse_epsilon
    from .calibrate import summary as cal_summary
    from .schedule import parse_sampling_rate, parse_steps

    contract = parse_contract(args.sampling, args.adjacency)
    if contract != POISSON_ADD_REMOVE:
        raise InputError(
            "--sampling",
            f"calibration is certified for poisson + add-remove only, not "
            f"{contract.sampling} + {contract.adjacency} (Bok's accountant has no monotonicity "
            "obligation in the proof catalogue)",
        )
    target, delta = parse_epsilon(args.epsilon), parse_delta(args.delta)
    steps, q = parse_steps(args.steps), parse_sampling_rate(args.sampling_rate)
    t0 = time.perf_counter()
    if args.accountant == "pld":
        from ..progress import Progress
        from .calibrate_pld import calibrate_pld
        from .calibrate_pld import summary as pld_summary

        if args.orders != "fractional":
            raise InputError("--orders", "is a setting of the Rényi accountant; the PLD accountant has none")
        cal = calibrate_pld(target, delta, steps, q, args.grid, progress=Progress())
        write_summary = pld_summary
    else:
        cal = calibrate(target, delta, steps, q, fractional=args.orders == "fractional")
        write_summary = cal_summary
    seconds = time.perf_counter() - t0
    texts = {args.out: cal.passing.dumps(), args.out_fail: cal.failing.dumps()}
    for path, text in texts.items():
        if path:
            cli.write_atomically(path, text)
    if args.json:
        sys.stdout.write(
            json.dumps(
                {
                    "accountant": args.accountant,
                    "s_fail": exact_str(cal.s_fail),
                    "s_pass": exact_str(cal.s_pass),
                    "relative_width": upper_decimal(cal.relative_width, 3),
                    "pass": cal.passing.to_json(),
                    "fail": cal.failing.to_json(),
                },
                indent=2,
            )
            + "\n"
        )
    else:
        sys.stdout.write(write_summary(cal, target, delta, steps, q, seconds))
        for path, what in ((args.out, "passing"), (args.out_fail, "failing")):
            if path:
                sys.stdout.write(f"{what} certificate written to {path} (check it with: certify verify {path})\n")
    return 0
