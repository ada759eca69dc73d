"""The plain-language statement of an audit: what is protected, under which contract, by which
accountant, and what is not covered (in the spirit of TF Privacy's privacy statements and the reporting
recommendations of Ponomareva et al. 2023, "How to DP-fy ML", Sec. 5.3)."""

from __future__ import annotations

from ..balls import lower_decimal, upper_decimal
from .audit import HOLDS, REFUTED, Verdict
from .claim import show

ACCOUNTANTS = {
    "renyi": "the certified Rényi accountant of the Poisson-subsampled Gaussian (Mironov, Talwar, Zhang 2019; "
    "conversion of Balle et al. 2020), certificate kind dpsgd/renyi-poisson",
    "bok": "Bok's certified Rényi accountant of fixed-size DP-SGD (Theorem 1), certificate kind dpsgd/renyi-bok",
    "pld": "the certified privacy-loss-distribution (lossless) accountant: exact integer composition of "
    "discretisations that provably dominate / are dominated by the contract's pair, certificate kind pld/dpsgd",
    "events-rdp": "the certified Rényi accountant of dp_accounting's event algebra (each mechanism's theorem, Rényi "
    "composition, conversion of Balle et al. 2020), certificate kind events/rdp",
}
RELATIONS = {
    "add-remove": "whether any one record took part at all (adding or removing one record)",
    "replace-one": "the value of any one record (replacing one record by any other; the dataset size is treated as public)",
    "replace-special": "the value of any one record against a special (null) record (replacing one record by the special one)",
}


def protected(verdict: Verdict) -> str:
    c = verdict.claim.contract
    if c is None:
        return (
            RELATIONS[verdict.claim.ledger.relation]
            + ": the distribution of everything the events release changes by at most the stated (epsilon, delta)"
        )
    if c.adjacency == "add-remove":
        return (
            "whether any one example took part in training at all (adding or removing one example changes the "
            "distribution of everything released during training by at most the stated (epsilon, delta))"
        )
    return (
        "the value of any one example (replacing one example by any other changes the distribution of everything "
        "released during training by at most the stated (epsilon, delta)); the dataset size is treated as public"
    )


def caveats(verdict: Verdict) -> list[str]:
    c = verdict.claim.contract
    if c is None:
        from ..events.certificates import caveats as upper_only

        return upper_only(verdict.claim.ledger) + [
            "each event is the mechanism its dp_accounting class describes, with the parameters stated (noise relative to "
            "the sensitivity under the stated relation), run on the data as described; anything else done with the data is not covered",
            "the privacy unit is one record: a person contributing several records is protected only through group privacy (weaker)",
            "the floating-point samplers are assumed ideal",
        ]
    out = []
    if c.sampling == "poisson":
        out.append(
            "assumes Poisson sampling: each example joins each step's batch independently with probability q "
            "(variable batch size). If your data loader shuffles and cuts fixed-size batches, or samples "
            "fixed-size batches, this does not apply"
        )
    else:
        out.append(
            "assumes each step's batch is a fresh uniformly random subset of exactly b of the n examples. "
            "Shuffling once per epoch and cutting consecutive batches is a different mechanism: this does "
            "not apply to it"
        )
    out += [
        "the noise multiplier is relative to the clip norm C: Gaussian noise of standard deviation sigma*C is added "
        f"to the sum of per-example gradients each clipped to norm C (sensitivity {c.sensitivity}); microbatches, "
        "gradient accumulation without rescaling q, or a second use of an example per step change this",
        "delta is per example: it bounds, for each example, the probability-like slack of the guarantee; it is not "
        "a probability over the dataset. Keep it well below 1/n",
        "the privacy unit is one example: a person contributing several examples is protected only through group privacy (weaker)",
        "hyperparameter tuning on the private data, and any other use of the data outside these DP-SGD steps, is not covered",
        "the guarantee is for releasing everything DP-SGD computes (all noisy gradients / all iterates); the "
        "floating-point sampler and noise generator are assumed ideal",
    ]
    return out


def statement(verdict: Verdict) -> str:
    cl = verdict.claim
    lines = ["Statement:"]
    eps, dl = show(cl.epsilon), show(cl.delta)
    if verdict.outcome == HOLDS:
        a = verdict.deciding
        what = "This DP-SGD run" if cl.contract is not None else "This release"
        lines.append(f"  {what} ({cl.describe()}) is certified ({eps}, {dl})-differentially private.")
        which = ACCOUNTANTS[a.accountant]
        if a.certificate is not None and a.certificate.kind == "dpsgd/renyi-bok-schedule":
            which = (
                "Bok's certified one-step Rényi bound of fixed-size DP-SGD (Theorem 1) for each phase, composed "
                "over the phases at one order, certificate kind dpsgd/renyi-bok-schedule"
            )
        lines.append(
            f"  Accountant: {which}"
            + (f", grid {show(a.grid)}" if a.grid is not None else "")
            + (f", alpha = {a.alpha}" if a.alpha and a.accountant != "pld" else "")
            + "."
        )
    elif verdict.outcome == REFUTED:
        a = verdict.deciding
        lines.append(
            f"  The claim ({eps}, {dl})-DP is FALSE for this run under its contract: for a worst-case pair of "
            f"neighbouring datasets, epsilon at delta = {dl} is at least {lower_decimal(a.epsilon_lower, 6)}."
        )
        lines.append(
            "  (Worst case over datasets and losses: one example's clipped gradient is a fixed vector of norm "
            "C; it concerns releasing all noisy gradients / iterates.)"
        )
        lines.append(f"  Accountant: {ACCOUNTANTS['pld']}, grid {show(a.grid)}.")
    else:
        b = verdict.best_upper
        if b is not None:
            lines.append(
                f"  The claim ({eps}, {dl})-DP is not certified: the best certified bound is "
                f"epsilon <= {upper_decimal(b.epsilon_upper, 6)} ({b.accountant})."
            )
        else:
            lines.append(f"  The claim ({eps}, {dl})-DP is not certified: no certified accountant applied.")
    lines.append(f"  What is protected: {protected(verdict)}.")
    if cl.contract is not None:
        lines.append(f"  {cl.contract.statement()}.")
    else:
        lines.append(f"  Neighbouring relation: {cl.ledger.relation} (dp_accounting's NeighboringRelation).")
    lines.append("  Not covered / assumptions:")
    lines += [f"  - {c}." for c in caveats(verdict)]
    for a in cl.assumptions:
        lines.append(f"  - claim file: {a}")
    return "\n".join(lines) + "\n"
