"""``certify plot --run CERT``: a PNG of the user's own run from its certificate (matplotlib: the ``plot`` extra).

The certificate is re-checked first (as ``certify verify`` does); only one that verifies is drawn. Two panels, both
from :mod:`certify.report.curves` (the computations of ``certify report``'s figures, in balls at the certificate's
precision, written once):

* the certified epsilon after t of the run's T steps (one phase), at the recorded order and delta (an upper bound for
  every t: any order gives a valid bound, so it is not re-optimised per t), with its band; a second axis in epochs
  when the certificate records Opacus's count (batch_size, dataset_size, epochs); the float libraries' values at the
  same t (dp_accounting's RDP accountant, Opacus's when installed) overlaid for comparison, labelled as estimates;
* the certified privacy profile delta(eps) (upper edge of the band) on a log scale.

Floats appear only to place points on the drawing and in the overlays, which are labelled floats.
"""

from __future__ import annotations

from . import signals
from .balls import InputError, float_of


def _float_overlays(doc: dict, ts: list[int]) -> dict[str, list[float]]:
    """{library: [epsilon at t for t in ts]} for the float accountants installed (Poisson + add-remove, one phase)."""
    i = doc["inputs"]
    if doc["kind"] != "dpsgd/renyi-poisson" or i.get("phases") != "1":
        return {}
    q, s, d = (float_of(_exact(i[k])) for k in ("phase[0].sampling_rate", "phase[0].noise_multiplier", "delta"))
    out: dict[str, list[float]] = {}
    try:
        import dp_accounting
    except ImportError:
        signals.raise_if_arrived()
        dp_accounting = None
    if dp_accounting is not None:
        vals = []
        for t in ts:
            acc = dp_accounting.rdp.RdpAccountant()
            acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(s)), t)
            vals.append(acc.get_epsilon(d))
        out["dp_accounting RDP (float estimate)"] = vals
    try:
        from opacus.accountants import RDPAccountant
    except ImportError:
        signals.raise_if_arrived()
        RDPAccountant = None
    if RDPAccountant is not None:
        vals = []
        for t in ts:
            acc = RDPAccountant()
            acc.history = [(s, q, t)]
            vals.append(acc.get_epsilon(d))
        out["Opacus RDP (float estimate)"] = vals
    return out


def _reoptimised(doc: dict, ts: list[int]) -> list[float] | None:
    """The certified epsilon after t steps with the order re-chosen at each t (Poisson, one phase): each point is the
    upper endpoint of a ``dpsgd/renyi-poisson`` ball (:func:`certify.poisson.accountant.certify_poisson`), rounded up
    to a float for drawing. None for other kinds (their band at the recorded order is drawn alone)."""
    i = doc["inputs"]
    if doc["kind"] != "dpsgd/renyi-poisson" or i.get("phases") != "1":
        return None
    import math

    from .poisson.accountant import certify_poisson, epsilon_upper
    from .poisson.schedule import single

    q, s, d = (_exact(i[k]) for k in ("phase[0].sampling_rate", "phase[0].noise_multiplier", "delta"))
    out = []
    for t in ts:
        e = float(epsilon_upper(certify_poisson(single(q, s, t), d)))
        out.append(math.nextafter(e, math.inf))
    return out


def _exact(text):
    from .balls import exact

    return exact(text)


def draw(doc: dict, path: str, source: str) -> str:
    """Draw the verified certificate ``doc`` into the PNG ``path``; returns the caption line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .report import curves

    rec = curves.privacy_record(doc)
    if rec is None:
        raise InputError("--run", f"kind {doc.get('kind')} has no privacy curve to draw (a Rényi DP-SGD certificate has)")
    steps = curves.steps_band(rec)
    profile = curves.profile_band(rec)
    fig, axes = plt.subplots(1, 2 if steps is not None else 1, figsize=(11 if steps is not None else 5.5, 4.2), squeeze=False)
    axes = axes[0]
    if steps is not None:
        ax = axes[0]
        ts = [int(float_of(x)) for x in steps.x]
        hi = [float_of(v) for v in steps.hi]
        lo = [float_of(v) for v in steps.lo]
        ax.fill_between(ts, lo, hi, color="tab:blue", alpha=0.3, label="certified band")
        ax.plot(ts, hi, color="tab:blue", lw=1.5, label=f"certified epsilon at the recorded alpha = {doc['witnesses'].get('alpha', rec.alpha)}")
        best = _reoptimised(doc, ts)
        if best is not None:
            ax.plot(ts, best, color="tab:green", lw=1.5, label="certified epsilon, alpha chosen at each t")
        for (name, vals), style in zip(_float_overlays(doc, ts).items(), ("--", ":")):
            ax.plot(ts, vals, style, color="gray", lw=1.2, label=name)
        ax.set_xlabel("steps t")
        ax.set_ylabel(f"epsilon at delta = {doc['inputs']['delta']}")
        i = doc["inputs"]
        if "batch_size" in i and "dataset_size" in i:
            n, b = int(i["dataset_size"]), int(i["batch_size"])
            fixed = i.get("sampling") == "fixed-size"  # an epoch is 1/p = n/b steps of b examples; Poisson: ceil(n/b)
            k = n / b if fixed else -(-n // b)  # steps per epoch, as Opacus counts (T = floor(E / q))
            sec = ax.secondary_xaxis("top", functions=(lambda t, k=k: t / k, lambda e, k=k: e * k))
            sec.set_xlabel(f"epochs ({n}/{b} = {k:g} steps each)" if fixed else f"epochs ({k} steps each, Opacus's count)")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    ax = axes[-1]
    es = [float_of(x) for x in profile.x]
    dh = [max(float_of(v), 1e-300) for v in profile.hi]
    dl = [max(float_of(v), 1e-300) for v in profile.lo]
    ax.fill_between(es, dl, dh, color="tab:orange", alpha=0.3, label="certified band")
    ax.plot(es, dh, color="tab:orange", lw=1.5, label="certified delta(eps) (upper edge)")
    ax.axvline(float_of(rec.epsilon), color="k", lw=0.8, ls=":", label=f"certified epsilon {float_of(rec.epsilon):.6g}")
    ax.set_yscale("log")
    ax.set_xlabel("eps")
    ax.set_ylabel("delta(eps)")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    caption = (
        f"{source}: verified {doc['kind']} certificate; bands are outward-rounded ball endpoints (certified), "
        "grey lines are float estimates of other libraries (not certified)"
    )
    fig.suptitle(caption, fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return caption


def run(args) -> int:
    from .certificate import load
    from .cli import write_atomically  # noqa: F401  (paths are checked by the cli before any work)
    from .verify import verify_document
    from .verify_command import _read

    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise InputError("--run", "drawing needs matplotlib: pip install 'certify[plot]'") from None
    data = _read(args.run)
    doc = load(data)
    rep = verify_document(doc, text=data.decode("utf-8"))
    if rep.exit_code not in (0, 6):
        raise InputError("--run", f"{args.run} does not verify (exit {rep.exit_code}): nothing is drawn; see certify verify {args.run}")
    out = args.out or (args.run[:-5] if args.run.endswith(".json") else args.run) + ".png"
    draw(doc, out, args.run)
    print(f"wrote {out} (certified epsilon against steps and delta(eps) of {args.run})")
    return 0
