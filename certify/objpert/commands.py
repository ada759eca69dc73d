"""CLI of the Watkins-Arora part: ``certify objpert`` and ``certify gaussian-benchmark``."""

from __future__ import annotations

import argparse

from ..balls import lower_decimal, upper_decimal
from ..certificate import Certificate
from ..cli import Progress, add_output_options, check_range, emit, exact_text
from .certificates import certify_gaussian_benchmark, certify_theorem_4_1
from .problem import make_loss, make_problem

#: which input drives a quantity out of the exact range (cli.check_range), and what is admissible
RANGE_HINTS = {
    "c_N": ("--epsilon", "a larger --epsilon or --zeta (Corollary 4.13's c_N of the chosen N stays above 1e-315652)"),
    "gaussian_floor": ("--epsilon", "a larger --epsilon (G^2/(2 sigma^2) = eps^2/(32 u^2) stays above 1e-315652)"),
    "q_mu": ("--zeta", "a larger --zeta or a smaller --n (q(mu) stays above 1e-315652)"),
    "delta_divergence": ("--epsilon", "a smaller --epsilon or --noise-multiplier, so that the divergence term of (10) stays above 1e-315652"),
    "delta_N": ("--epsilon", "a smaller --epsilon or --noise-multiplier, so that delta_N stays above 1e-315652"),
    "delta_truncation": ("--u", "a smaller --u, so that the truncation term of (10) stays above 1e-315652"),
    "rho_half_N": ("--iterations", "fewer --iterations, so that rho^(N/2) of (9) stays above 1e-315652"),
    "delta_gaussian": ("--epsilon", "(sigma/G) * epsilon below about 1200 (delta_G of C.5 above 1e-315652)"),
    "delta_integrated_tail": ("--epsilon", "(sigma/G) * epsilon below about 1200 (the bound of C.5 above 1e-315652)"),
}

#: Example 4.8 of the paper (with the target delta of Appendix C.4).
EXAMPLE_4_8 = {
    "n": "1000000",
    "d": "10000",
    "mu": "0.01",
    "loss": "logistic",
    "zeta": "1",
    "noise_multiplier": "5",
    "u": "6",
    "epsilon": "1",
    "iterations": "1500",
    "target_delta": "1e-7",
}


def register(sub) -> None:
    p = sub.add_parser(
        "objpert",
        help="certify (eps, delta)-DP of gradient descent on a perturbed GLM (Watkins-Arora)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Theorem 4.1 of Watkins & Arora (2026): gradient descent from w0 = 0 on a regularized GLM\n"
            "with Gaussian objective perturbation z ~ N(0, sigma^2 I) releases w_N. Prints the constants,\n"
            "the threshold (7), tau* (8), eps_0 (9) and delta(eps) (10) as proven enclosures, and the\n"
            "claim '(eps, delta)-DP'. With --delta it also finds the first N certified by the exact\n"
            "finite-N Theorem C.13 (radii of Appendix C.4), witnessing why every smaller N fails.\n\n"
            "All numbers are exact: integers, decimals (0.01, 1e-7) or fractions (1/3)."
        ),
        epilog="example: certify objpert --example 4.8     (n=1e6, d=1e4, mu=0.01, logistic, zeta=1,\n"
        "         sigma/G=5, u=6, eps=1, N=1500, target delta 1e-7)",
    )
    p.add_argument("--example", choices=["4.8"], help="fill the parameters of the paper's Example 4.8 (explicit options override them)")
    g = p.add_argument_group("problem (Section 3)")
    g.add_argument("--n", type=exact_text, help="sample size n (positive integer)")
    g.add_argument("--d", type=exact_text, help="dimension d (positive integer)")
    g.add_argument("--mu", type=exact_text, help="regularization mu > 0")
    g.add_argument("--zeta", type=exact_text, help="feature norm bound zeta > 0")
    g.add_argument(
        "--loss", choices=["logistic", "custom"], help="loss preset (logistic: L1=1, L2=1/4, L3=1/(6 sqrt 3)) or custom with --L1 --L2 --L3"
    )
    g.add_argument("--L1", type=exact_text, help="custom loss: bound on |l'| (> 0)")
    g.add_argument("--L2", type=exact_text, help="custom loss: bound on l'' (> 0)")
    g.add_argument("--L3", type=exact_text, help="custom loss: Lipschitz constant of l'' (> 0)")
    g = p.add_argument_group("mechanism (Section 3.2, Theorem 4.1)")
    g.add_argument("--eta", type=exact_text, help="step size, 0 < eta <= 1/L and eta*mu < 1 (default 1/L)")
    g.add_argument("--noise-multiplier", type=exact_text, help="sigma/G (sigma = multiplier * 2 L1 zeta / n)")
    g.add_argument("--sigma", type=exact_text, help="noise standard deviation sigma > 0 (instead of the multiplier)")
    g.add_argument("--u", type=exact_text, help="truncation parameter u >= 0")
    g.add_argument("--iterations", type=exact_text, help="iteration count N (checked against (7)); default: the smallest N satisfying (7)")
    g = p.add_argument_group("privacy question")
    g.add_argument("--epsilon", type=exact_text, help="epsilon (>= eps_0 of (9))")
    g.add_argument(
        "--delta",
        dest="target_delta",
        type=exact_text,
        metavar="DELTA",
        help="target delta in (0, 1): also search the first N certified by Theorem C.13",
    )
    g.add_argument("--target-delta", dest="target_delta", type=exact_text, help=argparse.SUPPRESS)  # older spelling
    g = p.add_argument_group("utility (Section 4.3; upper bounds)")
    g.add_argument("--utility", action="store_true", help="add E_opt (12), Theorems 4.10, 4.9, 4.7 and Corollary 4.11 at N")
    g.add_argument("--delta-S", type=exact_text, help="sample failure probability in (0, 1) (default 0.01)")
    g.add_argument("--comparator-norm", type=exact_text, help="comparator norm bound W > 0 (default 1)")
    g.add_argument("--beta", type=exact_text, help="single-release failure probability in (0, 1) (default 0.05)")
    g.add_argument("--gradient-norm", type=exact_text, help="actual ||grad F(0;S)|| for a_R in (12) (default: the bound L1 zeta)")
    add_output_options(p)
    p.set_defaults(func=run_objpert)

    k = sub.add_parser(
        "calibrate",
        help="calibrate sigma (noise std), mu, eta, N to a target (eps, delta) (Watkins-Arora Corollary 4.13)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Corollary 4.13 of Watkins & Arora (2026): from a target (eps <= 1, delta), the sample failure\n"
            "probability delta_S and a public comparator radius W, choose u, sigma (the standard deviation of\n"
            "the perturbation; sigma/G is the noise multiplier), mu = max{mu_util, mu_priv},\n"
            "eta = 1/L and the smallest N satisfying (7) and c_N <= eps/4; certify the steps of the proof\n"
            "(eps-hat <= 25 eps/32 < eps, delta-hat < delta) and the utility bound. u and mu are published as\n"
            "decimals rounded up. --method theorem-C.13 also finds, at the same sigma and mu, the first N\n"
            "certified by Theorem C.13, and at the corollary's N a certified bracket on the smallest sigma/G.\n"
            "The summary prints the `certify objpert` command that re-certifies the chosen parameters."
        ),
    )
    k.add_argument("--epsilon", type=exact_text, required=True, help="target epsilon, 0 < eps <= 1")
    k.add_argument("--delta", type=exact_text, required=True, help="target delta in (0, 1)")
    k.add_argument("--delta-S", type=exact_text, default="0.01", help="sample failure probability (default 0.01)")
    k.add_argument("--comparator-norm", type=exact_text, default="1", help="public radius W > 0 (default 1)")
    k.add_argument("--n", type=exact_text, required=True, help="sample size n")
    k.add_argument("--d", type=exact_text, required=True, help="dimension d")
    k.add_argument("--zeta", type=exact_text, default="1", help="feature norm bound zeta > 0 (default 1)")
    k.add_argument("--loss", choices=["logistic", "custom"], default=None, help="loss preset (default logistic)")
    k.add_argument("--L1", type=exact_text)
    k.add_argument("--L2", type=exact_text)
    k.add_argument("--L3", type=exact_text)
    k.add_argument(
        "--method",
        choices=["corollary-4.13", "theorem-C.13"],
        default="corollary-4.13",
        help="corollary-4.13 (the paper's choice) or theorem-C.13 (sharper N and sigma)",
    )
    add_output_options(k)
    k.set_defaults(func=run_calibrate)

    b = sub.add_parser(
        "gaussian-benchmark",
        help="certify the exact Gaussian profile and its integrated-tail bound (Watkins-Arora Appendix C.5)",
        description="Appendix C.5 of Watkins & Arora (2026): for a ridge-regularized linear loss the release "
        "is a rescaled Gaussian mechanism. Certifies its exact profile delta_G(eps) and the "
        "integrated-tail bound (2G/sigma) Q1((sigma/G)(eps - G^2/(2 sigma^2))) that dominates it.",
    )
    b.add_argument("--noise-multiplier", type=exact_text, required=True, help="sigma/G > 0 (sigma the noise standard deviation, G the sensitivity)")
    b.add_argument("--epsilon", type=exact_text, required=True, help="epsilon >= G^2/(2 sigma^2)")
    add_output_options(b)
    b.set_defaults(func=run_gaussian_benchmark)


def _params(args) -> dict:
    params = dict(EXAMPLE_4_8) if args.example == "4.8" else {}
    for key in ("n", "d", "mu", "zeta", "loss", "L1", "L2", "L3", "eta", "noise_multiplier", "sigma", "u", "iterations", "epsilon", "target_delta"):
        v = getattr(args, key)
        if v is not None:
            params[key] = v
    if "sigma" in params and args.noise_multiplier is None:
        params.pop("noise_multiplier", None)
    if args.loss == "custom" or (args.loss is None and args.L1 is not None):
        params["loss"] = "custom"
    return params


def run_objpert(args) -> int:
    from ..balls import InputError

    prm = _params(args)
    for key, flag in (("n", "--n"), ("d", "--d"), ("mu", "--mu"), ("zeta", "--zeta"), ("u", "--u"), ("epsilon", "--epsilon")):
        if key not in prm:
            raise InputError(flag, "required (or use --example 4.8)")
    loss = make_loss(prm.get("loss"), prm.get("L1"), prm.get("L2"), prm.get("L3"))
    problem = make_problem(
        n=prm["n"],
        d=prm["d"],
        mu=prm["mu"],
        zeta=prm["zeta"],
        loss=loss,
        u=prm["u"],
        sigma=prm.get("sigma"),
        noise_multiplier=prm.get("noise_multiplier"),
        eta=prm.get("eta"),
    )

    bar = Progress("Theorem C.13 search")

    def progress(N):
        bar.update(f"N = {N}")

    utility = None
    if args.utility or any(getattr(args, k) is not None for k in ("delta_S", "comparator_norm", "beta", "gradient_norm")):
        utility = {"delta_S": args.delta_S, "comparator_norm": args.comparator_norm, "beta": args.beta, "gradient_norm": args.gradient_norm}
    cert = certify_theorem_4_1(problem, prm["epsilon"], prm.get("iterations"), prm.get("target_delta"), progress=progress, utility=utility)
    bar.done()
    check_range(cert, RANGE_HINTS)
    emit(cert, summary_theorem_4_1(cert), args)
    return 0


def run_calibrate(args) -> int:
    from ..balls import exact
    from . import calibrate as K

    if args.loss is None and args.L1 is None:
        args.loss = "logistic"
    loss = make_loss(args.loss if args.loss != "custom" or args.L1 is None else "custom", args.L1, args.L2, args.L3)
    cor = K.certify_corollary_4_13(args.epsilon, args.delta, args.delta_S, args.comparator_norm, args.n, args.d, args.zeta, loss)
    check_range(cor, RANGE_HINTS)
    w = cor.to_json()["witnesses"]
    i = cor.inputs
    replay = (
        f"certify objpert --n {i['n']} --d {i['d']} --mu {w['mu']} --zeta {i['zeta']} "
        + ("--loss logistic" if loss.name == "logistic" else f"--loss custom --L1 {i['L1']} --L2 {i['L2']} --L3 {i['L3']}")
        + f" --noise-multiplier {w['noise_multiplier']} --u {w['u']} --iterations {w['iterations']} "
        f"--epsilon {i['epsilon']} --delta {i['delta']}"
    )
    text = summary_generic(cor, "Corollary 4.13 (Watkins-Arora 2026): calibration to a target (eps, delta)")
    text += (
        f"\nverdict: sigma/G = {w['noise_multiplier']}, u = {w['u']}, mu = {w['mu']}, eta = 1/L, "
        f"N = {w['iterations']} give ({i['epsilon']}, {i['delta']})-DP.\nre-certify with:\n  {replay}\n"
    )
    if args.method == "corollary-4.13":
        emit(cor, text, args)
        return 0
    problem = make_problem(n=i["n"], d=i["d"], mu=w["mu"], zeta=i["zeta"], loss=loss, u=w["u"], noise_multiplier=w["noise_multiplier"])
    cert = K.certify_calibration_c13(problem, exact(i["epsilon"]), exact(i["delta"]), w["iterations"])
    check_range(cert, RANGE_HINTS)
    cw = cert.to_json()["witnesses"]
    b = cw["sigma_bracket"]
    text2 = summary_generic(cert, "Theorem C.13 (Watkins-Arora 2026): sharper calibration at the same sigma, mu")
    text2 += (
        f"\nverdict: Theorem C.13 certifies ({i['epsilon']}, {i['delta']})-DP from N = "
        f"{cw['theorem_C13']['first_passing_iterations']} (Corollary 4.13: N = {w['iterations']}); "
        f"at N = {w['iterations']} "
        f"the noise multiplier can drop to sigma/G in ({b['fail']}, {b['pass']}] (corollary: "
        f"{w['noise_multiplier']}).\n"
    )
    emit(cert, text + "\n" + text2, args)
    return 0


def run_gaussian_benchmark(args) -> int:
    cert = certify_gaussian_benchmark(args.noise_multiplier, args.epsilon)
    check_range(cert, RANGE_HINTS)
    emit(cert, summary_generic(cert, "Appendix C.5 (Watkins-Arora 2026): exact Gaussian benchmark"), args)
    return 0


# --------------------------------------------------------------------------------------------
# Summaries
# --------------------------------------------------------------------------------------------
def _row(cert: Certificate, name: str, digits: int = 10) -> str:
    q = cert.quantities[name]
    if q.integer:
        enclosure = str(int(q.value.mid().fmpq().p))  # an exact integer ball
        return f"  {name:<29}{q.equation:<16}{enclosure:<44}{q.description}"
    enclosure = f"[{lower_decimal(q.value, digits)}, {upper_decimal(q.value, digits)}]"
    return f"  {name:<29}{q.equation:<16}{enclosure:<44}{q.description}"


def _claims(cert: Certificate) -> list[str]:
    return [f"  [{'proved' if c.holds else 'FALSE '}] {c.statement}   {c.equation}" for c in cert.claims]


def summary_generic(cert: Certificate, title: str) -> str:
    lines = [
        title,
        "inputs: " + " ".join(f"{k}={v}" for k, v in cert.inputs.items()),
        f"working precision: {cert.precision} bits; enclosures rounded outward",
        "",
        f"  {'quantity':<29}{'equation':<16}{'enclosure [lower, upper]':<44}meaning",
    ]
    lines += [_row(cert, k) for k in cert.quantities]
    lines += ["", "claims (decided in ball arithmetic):"] + _claims(cert)
    return "\n".join(lines) + "\n"


def summary_theorem_4_1(cert: Certificate) -> str:
    w = cert.to_json()["witnesses"]
    title = "Theorem 4.1 (Watkins-Arora 2026): gradient descent on a perturbed GLM"
    text = summary_generic(cert, title)
    eps = cert.inputs["epsilon"]
    N = w["iterations"]
    verdict = [
        "",
        f"verdict: after N = {N} iterations the release is ({eps}, {w['reported_delta']})-DP "
        f"(Theorem 4.1; delta = truncation + divergence, each an upper bound).",
    ]
    if "theorem_C13" in w:
        c = w["theorem_C13"]
        counts = {}
        for run in c["failures"]:
            counts[run["reason"]] = counts.get(run["reason"], 0) + run["to"] - run["from"] + 1
        why = ", ".join(f"{n} x '{r}'" for r, n in counts.items())
        dN = cert.quantities["delta_N"].value
        verdict.append(
            f"Theorem C.13 (radii of C.4): first passing N = {c['first_passing_iterations']} with "
            f"delta_N({eps}) <= {upper_decimal(dN, 9)} <= {cert.inputs['target_delta']}; "
            f"smaller N fail: {why}."
        )
    return text + "\n".join(verdict) + "\n"
