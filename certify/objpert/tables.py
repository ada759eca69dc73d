"""Every privacy number Watkins-Arora print (Example 4.8, Appendix C.4, C.5), re-derived and compared.

Reads ``tables/published/watkins_arora2026_published.csv`` (the printed values, transcribed) and
writes ``tables/watkins_arora_2026_privacy.{csv,md}``: each printed number beside its certified
enclosure and a verdict (see :mod:`certify.published`). Utility rows (Section 4.3) are not privacy
numbers and are left to the utility tables.
"""
from __future__ import annotations

import csv
import io
import os

from ..balls import (
    InputError, arb, ball, certain_ceil, escalate, fmpq, lower_decimal, upper_decimal,
)
from ..published import CONFIRMED, MISMATCH, UNDECIDED, classify
from . import privacy as P
from .benchmark import gaussian_profile, integrated_tail_bound
from .certificates import search_c13
from .problem import constants, make_loss, make_problem

PUBLISHED = "watkins_arora2026_published.csv"
OUT_STEM = "watkins_arora_2026_privacy"
UTILITY_IDS = {"ex48_eopt", "ex48_pert", "ex48_sample", "ex48_excess", "ex48_unreg"}


def example_problem(mu: str):
    """Example 4.8 / C.4: n = 1e6, d = 1e4, logistic, zeta = 1, eta = 1/L, sigma = 5G, u = 6."""
    return make_problem(n="1000000", d="10000", mu=mu, zeta="1", loss=make_loss("logistic"), u="6",
                        noise_multiplier="5")


def _rounding(row: dict) -> str:
    if row["id"] in ("ex48_threshold7", "ex48_c13_firstN", "c4_mu3_threshold7", "c4_mu3_firstN"):
        return "exact"
    if "rounded upward" in row["quantity"] + row["note"]:
        return "upward"
    return "nearest"


def _values() -> dict[str, list[tuple[str, arb, str]]]:
    """Certified values for every privacy row: id -> [(part label, ball, printed text)]."""
    eps, target = fmpq(1), fmpq(1, 10 ** 7)
    out: dict[str, list] = {}
    for mu in ("1/100", "1/1000"):
        p = example_problem(mu)
        c = constants(p)
        thr = P.threshold_7(c)
        N7 = certain_ceil(thr)
        w = search_c13(p, c, eps, target, N7)
        N1 = w["first_passing_iterations"]
        v1, q1, d1 = P.c13_verdict(p, c, N1, eps, target)
        _, _, d0 = P.c13_verdict(p, c, N1 - 1, eps, target)
        tag = "mu2" if mu == "1/100" else "mu3"
        out[f"{tag}_N7"] = arb(N7)
        out[f"{tag}_N1"] = arb(N1)
        out[f"{tag}_delta"] = d1
        if tag == "mu2":
            out["delta518"] = d0
            out["alphabar"] = q1.alpha_bar
            out["s519"] = q1.s_N
            out["radius_step"] = q1.radius_step
            out["radius_gap"] = q1.radius_gap
            N = 1500
            e0 = P.epsilon_0(p, c, N)
            out["rhoN2"] = P.rho_half_power(c, N)
            out["eps0_gauss"] = P.gaussian_terms_9(c, N)
            out["tau_star"] = P.tau_star(p, c, N)
            out["trunc"] = P.truncation_mass(p)
            out["div"] = P.divergence_term(c, eps, e0)
            out["delta1"] = out["trunc"] + out["div"]
    out["c5_gauss"] = gaussian_profile(fmpq(5), eps)
    out["c5_tail"] = integrated_tail_bound(fmpq(5), eps)
    return out


#: published id -> list of (key into _values, printed part); ex48_eps0 prints two parts.
MAP = {
    "ex48_threshold7": [("mu2_N7", None)],
    "ex48_rhoN2": [("rhoN2", None)],
    "ex48_eps0": [("eps0_gauss", "0.0200"), ("tau_star", "2.5e-5")],
    "ex48_delta1": [("delta1", None)],
    "ex48_trunc": [("trunc", None)],
    "ex48_div": [("div", None)],
    "ex48_c13_firstN": [("mu2_N1", None)],
    "ex48_c13_delta519": [("mu2_delta", None)],
    "ex48_c13_delta518": [("delta518", None)],
    "c4_alphabar519": [("alphabar", None)],
    "c4_s519": [("s519", None)],
    "c4_radius_lhs519": [("radius_step", None)],
    "c4_radius_gap": [("radius_gap", None)],
    "c4_mu3_threshold7": [("mu3_N7", None)],
    "c4_mu3_firstN": [("mu3_N1", None)],
    "c4_mu3_delta": [("mu3_delta", None)],
    "c4_mu2_delta": [("mu2_delta", None)],
    "c5_gauss_delta": [("c5_gauss", None)],
    "c5_integrated_tail": [("c5_tail", None)],
}


def read_published(tables_dir: str) -> list[dict]:
    path = os.path.join(tables_dir, "published", PUBLISHED)
    if not os.path.exists(path):
        raise InputError("--tables-dir", f"{path} not found (run from the repository root or pass --tables-dir)")
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def compare_rows(tables_dir: str) -> list[dict]:
    """Re-derive every privacy row and classify it; escalates precision if a verdict is undecided."""
    published = [r for r in read_published(tables_dir) if r["id"] not in UTILITY_IDS]
    unknown = [r["id"] for r in published if r["id"] not in MAP]
    if unknown:
        raise InputError("published", f"no derivation for row(s) {', '.join(unknown)}")

    def attempt(prec):
        vals = _values()
        rows = []
        for r in published:
            rounding = _rounding(r)
            parts = MAP[r["id"]]
            verdicts, encl, dist = [], [], []
            for key, printed in parts:
                text = printed or r["published"]
                v = vals[key]
                verdict, d = classify(v, text, rounding)
                if verdict == UNDECIDED:
                    from ..balls import UndecidedError
                    raise UndecidedError(f"row {r['id']}")
                verdicts.append(verdict)
                if rounding == "exact":
                    encl.append(str(int(v.mid().fmpq().p)))
                else:
                    encl.append(f"[{lower_decimal(v, 10)}, {upper_decimal(v, 10)}]")
                dist.append(d)
            verdict = CONFIRMED if all(x == CONFIRMED for x in verdicts) else MISMATCH
            rows.append({
                "id": r["id"], "source": r["source"], "quantity": r["quantity"], "mu": r["mu"], "N": r["N"],
                "published": r["published"], "rounding": rounding,
                "certified_enclosure": " + ".join(encl), "verdict": verdict,
                "distance": "" if verdict == CONFIRMED else " + ".join(upper_decimal(ball(x), 3) for x in dist),
            })
        return rows

    return escalate(attempt, what="the Watkins-Arora table")


FIELDS = ["id", "source", "quantity", "mu", "N", "published", "rounding", "certified_enclosure", "verdict",
          "distance"]


def render_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=FIELDS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def render_md(rows: list[dict]) -> str:
    n_ok = sum(r["verdict"] == CONFIRMED for r in rows)
    lines = [
        "# Watkins-Arora (2026): printed privacy numbers vs certified enclosures",
        "",
        "Regenerated by `certify tables --paper watkins-arora`; do not edit by hand. Each printed value is",
        "compared with a ball that provably contains the true value: *confirmed* means every point of the",
        "enclosure prints as the published digits under the stated rounding (nearest: within half a unit",
        "of the last digit; upward: the published value is the smallest such decimal above the value;",
        "exact: integers).",
        "",
        f"**{n_ok} of {len(rows)} confirmed.**",
        "",
        "| id | source | quantity | mu | N | published | rounding | certified enclosure | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        verdict = r["verdict"] + (f" (distance {r['distance']})" if r["distance"] else "")
        lines.append(f"| {r['id']} | {r['source']} | {r['quantity']} | {r['mu']} | {r['N']} | {r['published']} "
                     f"| {r['rounding']} | {r['certified_enclosure']} | {verdict} |")
    return "\n".join(lines) + "\n"
