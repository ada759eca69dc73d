"""Figures 2-5 of Bok (2026) redrawn from our values (matplotlib, an optional extra: '.[plot]').

* Figure 2: eps vs T at p = 0.01, delta = 1e-6, sigma in {2, 6} (Table 2's rows);
* Figure 3: eps vs T at sigma = 4, delta = 1e-6, p in {0.0025, 0.04} (Tables 1 and 3);
  in both, the paper's printed "ours" values (``<tables_dir>/published``) as hollow markers over our curve;
* Figure 4: delta vs T with T p^2 = nu = 1/2, sigma = 2, eps in {2, 3, 4}: our certified delta at finite T
  (Corollary 1 read as delta at one alpha, (7)), the lossless estimate, and both limits (Lemma 3,
  Proposition 4) in balls;
* Figure 5: one-step Rényi bounds vs alpha at sigma = 3, p in {0.005, 0.01}: ours (certified), Birrell
  et al. m = 4 (certified) and their p^3 expansions (Proposition 5).

Plotted points of certified quantities are upper endpoints of certified enclosures; the lossless curve
is a float estimate. Each figure's caption line says which values are certified.
"""

from __future__ import annotations

import os

from ..balls import InputError, arb, ball, ctx, exact, fmpq, workprec

CAPTIONS = {
    2: "Certified: ours, Birrell, Wang (upper endpoints of enclosures). Estimate: lossless (float PLD). Hollow: the paper's printed values.",
    3: "Certified: ours, Birrell, Wang (upper endpoints of enclosures). Estimate: lossless (float PLD). Hollow: the paper's printed values.",
    4: "Certified: ours at finite T (upper bound on delta) and both limits (balls). Estimate: lossless.",
    5: "Certified: ours and Birrell m=4 (upper endpoints). Expansions: Proposition 5 truncated at p^3.",
}


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("--figure", "plots need matplotlib: pip install '.[plot]'") from None
    return plt


def _save(fig, path: str) -> None:
    """PNG bytes with no varying metadata (no Software/version line, no date): the same figure gives the
    same bytes; written atomically with the umask's mode."""
    import io

    from ..cli import write_atomically

    buf = io.BytesIO()
    fig.savefig(buf, dpi=110, format="png", metadata={"Software": None})
    write_atomically(path, buf.getvalue(), "--out-dir")


def _up(x: arb) -> float:
    return float(x.upper())  # plotting only: the upper endpoint of a certified enclosure, as a float


def _eps_rows(p: str, sigma: str, delta: str, tables_dir: str, cache_dir: str | None):
    from .tables import T_GRID, compute_all

    rows = [{"p": p, "sigma": sigma, "T": str(T), "delta": delta} for T in T_GRID]
    res = compute_all(rows, cache_dir, jobs=1)[f"{p}|{sigma}"]
    cols = {"ours": [], "birrell": [], "wang": [], "lossless": []}
    for T in T_GRID:
        c = res[f"{T}|{delta}"]
        for k in ("ours", "birrell", "wang"):
            cols[k].append(float(exact(c[k][1])))
        cols["lossless"].append(float(c["lossless"]))
    return list(T_GRID), cols


def _printed(p: str, sigma: str, delta: str, tables_dir: str) -> tuple[list[int], list[float]]:
    """(T, the paper's printed "ours") of the published rows at (p, sigma, delta) whose T and value are numbers
    (a ">= x" cell is left out): drawn, not certified, so the printed decimal is read as a float."""
    from .tables import read_published

    Ts, ys = [], []
    for r in read_published(tables_dir):
        if (r["p"], r["sigma"], r["delta"]) == (p, sigma, delta) and r["T"].isdigit() and not r["ours"].startswith(">="):
            Ts.append(int(r["T"]))
            ys.append(float(r["ours"]))
    return Ts, ys


def _eps_panels(panels, title, path, tables_dir, cache_dir, fig_no):
    plt = _plt()
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.2))
    for ax, (p, sigma, delta) in zip(axes, panels):
        Ts, cols = _eps_rows(p, sigma, delta, tables_dir, cache_dir)
        for k, label, style in (
            ("ours", "Our bounds", "o-"),
            ("birrell", "Birrell et al.", "s--"),
            ("wang", "Wang et al.", "^--"),
            ("lossless", "Lossless accountants", "x:"),
        ):
            ys = [min(y, 60) for y in cols[k]]
            ax.plot(Ts, ys, style, label=label)
        printed_T, printed = _printed(p, sigma, delta, tables_dir)
        ax.plot(printed_T, [min(y, 60) for y in printed], "o", mfc="none", ms=10, color="black", label="Bok (2026), printed")
        ax.set_xscale("log", base=2)
        ax.set_xticks(Ts)
        ax.set_xticklabels([str(t) for t in Ts], rotation=45)
        ax.set_xlabel("Iterations T")
        ax.set_ylabel("Privacy eps")
        ax.set_title(f"p = {p}, sigma = {sigma}, delta = {delta}")
        ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.text(0.01, 0.005, CAPTIONS[fig_no], fontsize=8)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    _save(fig, path)
    plt.close(fig)


def delta_at_alpha(rho: arb, alpha: int, T: int, eps: fmpq) -> arb:
    """(7): delta <= (1/alpha) (1 - 1/alpha)^(alpha-1) exp((alpha-1)(T rho - eps)) (Corollary 1 solved for delta)."""
    a = arb(alpha)
    return (1 / a) * (1 - 1 / a) ** (alpha - 1) * ((alpha - 1) * (T * rho - ball(eps))).exp()


def figure4(path, cache_dir):
    import math
    from .accountant import certify_rho
    from .asymptotics import delta_lossless_limit, delta_ours_limit_bound
    from .baselines.lossless import _composed
    from .problem import Problem

    plt = _plt()
    nu, sigma = fmpq(1, 2), fmpq(2)
    Ts = [2000, 4000, 8000, 16000, 32000]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for eps_i, color in ((2, "C0"), (3, "C1"), (4, "C2")):
        eps = fmpq(eps_i)
        ours, loss = [], []
        for T in Ts:
            p = exact(f"{math.sqrt(0.5 / T):.6f}")  # a public rational p with T p^2 close to nu
            with workprec(128):
                best = None
                for alpha in range(2, 40):
                    from .estimate import rho_float

                    lf = (alpha - 1) * (T * rho_float(Problem(alpha, p, sigma)) - eps_i)
                    if best is None or lf < best[0]:
                        best = (lf, alpha)
                rho = certify_rho(Problem(best[1], p, sigma), cache_dir=cache_dir).certificate.quantities["rho"].value
                ours.append(math.log10(_up(delta_at_alpha(rho, best[1], T, eps))))
            pld = _composed(float(p), 2.0, T)
            loss.append(math.log10(pld.get_delta_for_epsilon(float(eps_i))))
        with workprec(128):
            lim_o = math.log10(_up(delta_ours_limit_bound(eps, nu, sigma)))
            lim_l = math.log10(_up(delta_lossless_limit(eps, nu, sigma)))
        ax.plot(Ts, ours, "o-", color=color, label=f"Our bounds, eps = {eps_i}")
        ax.axhline(lim_o, color=color, linestyle="-", alpha=0.4, label=f"Limit (ours), eps = {eps_i}")
        ax.plot(Ts, loss, "x:", color=color, label=f"Lossless accountant, eps = {eps_i}")
        ax.axhline(lim_l, color=color, linestyle=":", alpha=0.4, label=f"Limit (lossless), eps = {eps_i}")
    ax.set_xscale("log", base=2)
    ax.set_xticks(Ts)
    ax.set_xticklabels([str(t) for t in Ts])
    ax.set_xlabel("Iterations T, with p = sqrt(nu/T) (6 digits)")
    ax.set_ylabel("log10 delta")
    ax.set_title("T p^2 = nu = 0.5, sigma = 2")
    ax.legend(fontsize=6, ncol=2)
    fig.text(0.01, 0.005, CAPTIONS[4], fontsize=8)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    _save(fig, path)
    plt.close(fig)


def figure5(path, cache_dir):
    from .accountant import certify_rho
    from .asymptotics import prop5_coefficients
    from .baselines.birrell import rho_birrell
    from .problem import Problem

    plt = _plt()
    sigma = fmpq(3)
    alphas = list(range(2, 17))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for p_text, color in (("0.005", "C0"), ("0.01", "C1")):
        p = exact(p_text)
        ours, bir, e_o, e_b = [], [], [], []
        with workprec(128):
            for a in alphas:
                rho = certify_rho(Problem(a, p, sigma), cache_dir=cache_dir).certificate.quantities["rho"].value
                ours.append(_up(rho))
                bir.append(_up(rho_birrell(a, p, sigma, 4)))
                co = prop5_coefficients(a, sigma)
                e_o.append(float((co["p2"] * ball(p) ** 2 + co["ours_p3"] * ball(p) ** 3).mid()))
                e_b.append(float((co["p2"] * ball(p) ** 2 + co["birrell_p3"] * ball(p) ** 3).mid()))
        ax.plot(alphas, ours, "o-", color=color, label=f"Our bounds, p = {p_text}")
        ax.plot(alphas, e_o, "-", color=color, alpha=0.4, label=f"Expansion (ours), p = {p_text}")
        ax.plot(alphas, bir, "s--", color=color, label=f"Birrell et al., p = {p_text}")
        ax.plot(alphas, e_b, "--", color=color, alpha=0.4, label=f"Expansion (Birrell et al.), p = {p_text}")
    ax.set_xlabel("Rényi order alpha")
    ax.set_ylabel("Rényi DP (one step)")
    ax.set_ylim(0, 1e-3)
    ax.set_title("sigma = 3")
    ax.legend(fontsize=7)
    fig.text(0.01, 0.005, CAPTIONS[5], fontsize=8)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    _save(fig, path)
    plt.close(fig)


def plot(figure: int, out_dir: str, tables_dir: str, cache_dir: str | None) -> str:
    """Figure ``figure`` as ``<out_dir>/bok_2026_figure<N>.png`` (Figures 2-3 read the printed values in ``tables_dir``)."""
    if figure not in (2, 3, 4, 5):
        raise InputError("--figure", f"must be one of 2, 3, 4, 5, got {figure}")
    if not os.path.isdir(out_dir):
        raise InputError("--out-dir", f"directory {out_dir} does not exist")
    path = os.path.join(out_dir, f"bok_2026_figure{figure}.png")
    tmp = path  # each figure is rendered in memory and written atomically by _save
    with ctx.workprec(128):
        if figure == 2:
            _eps_panels([("0.01", "2", "1e-6"), ("0.01", "6", "1e-6")], "Figure 2: sigma in {2, 6}, p = 0.01", tmp, tables_dir, cache_dir, 2)
        elif figure == 3:
            _eps_panels([("0.0025", "4", "1e-6"), ("0.04", "4", "1e-6")], "Figure 3: p in {0.0025, 0.04}, sigma = 4", tmp, tables_dir, cache_dir, 3)
        elif figure == 4:
            figure4(tmp, cache_dir)
        else:
            figure5(tmp, cache_dir)
    return path
