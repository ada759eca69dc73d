"""CLI of the Watkins-Arora part: ``certify objpert`` and ``certify gaussian-benchmark``."""
from __future__ import annotations

import argparse
import sys

from ..balls import lower_decimal, upper_decimal
from ..certificate import Certificate
from ..cli import add_output_options, emit, exact_text
from .certificates import certify_gaussian_benchmark, certify_theorem_4_1
from .problem import make_loss, make_problem

#: Example 4.8 of the paper (with the target delta of Appendix C.4).
EXAMPLE_4_8 = {"n": "1000000", "d": "10000", "mu": "0.01", "loss": "logistic", "zeta": "1",
               "noise_multiplier": "5", "u": "6", "epsilon": "1", "iterations": "1500",
               "target_delta": "1e-7"}


def register(sub) -> None:
    p = sub.add_parser(
        "objpert", help="certify (eps, delta)-DP of gradient descent on a perturbed GLM (Watkins-Arora)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Theorem 4.1 of Watkins & Arora (2026): gradient descent from w0 = 0 on a regularized GLM\n"
            "with Gaussian objective perturbation z ~ N(0, sigma^2 I) releases w_N. Prints the constants,\n"
            "the threshold (7), tau* (8), eps_0 (9) and delta(eps) (10) as proven enclosures, and the\n"
            "claim '(eps, delta)-DP'. With --target-delta it also finds the first N certified by the exact\n"
            "finite-N Theorem C.13 (radii of Appendix C.4), witnessing why every smaller N fails.\n\n"
            "All numbers are exact: integers, decimals (0.01, 1e-7) or fractions (1/3)."),
        epilog="example: certify objpert --example 4.8     (n=1e6, d=1e4, mu=0.01, logistic, zeta=1,\n"
               "         sigma/G=5, u=6, eps=1, N=1500, target delta 1e-7)")
    p.add_argument("--example", choices=["4.8"], help="fill the parameters of the paper's Example 4.8 "
                   "(explicit options override them)")
    g = p.add_argument_group("problem (Section 3)")
    g.add_argument("--n", type=exact_text, help="sample size n (positive integer)")
    g.add_argument("--d", type=exact_text, help="dimension d (positive integer)")
    g.add_argument("--mu", type=exact_text, help="regularization mu > 0")
    g.add_argument("--zeta", type=exact_text, help="feature norm bound zeta > 0")
    g.add_argument("--loss", choices=["logistic", "custom"],
                   help="loss preset (logistic: L1=1, L2=1/4, L3=1/(6 sqrt 3)) or custom with --L1 --L2 --L3")
    g.add_argument("--L1", type=exact_text, help="custom loss: bound on |l'| (> 0)")
    g.add_argument("--L2", type=exact_text, help="custom loss: bound on l'' (> 0)")
    g.add_argument("--L3", type=exact_text, help="custom loss: Lipschitz constant of l'' (> 0)")
    g = p.add_argument_group("mechanism (Section 3.2, Theorem 4.1)")
    g.add_argument("--eta", type=exact_text, help="step size, 0 < eta <= 1/L and eta*mu < 1 (default 1/L)")
    g.add_argument("--noise-multiplier", type=exact_text, help="sigma/G (sigma = multiplier * 2 L1 zeta / n)")
    g.add_argument("--sigma", type=exact_text, help="noise standard deviation sigma > 0 (instead of the multiplier)")
    g.add_argument("--u", type=exact_text, help="truncation parameter u >= 0")
    g.add_argument("--iterations", type=exact_text,
                   help="iteration count N (checked against (7)); default: the smallest N satisfying (7)")
    g = p.add_argument_group("privacy question")
    g.add_argument("--epsilon", type=exact_text, help="epsilon (>= eps_0 of (9))")
    g.add_argument("--target-delta", type=exact_text,
                   help="target delta in (0, 1): also search the first N certified by Theorem C.13")
    add_output_options(p)
    p.set_defaults(func=run_objpert)

    b = sub.add_parser(
        "gaussian-benchmark", help="Appendix C.5: exact Gaussian profile vs the integrated-tail bound",
        description="Appendix C.5 of Watkins & Arora (2026): for a ridge-regularized linear loss the release "
                    "is a rescaled Gaussian mechanism. Certifies its exact profile delta_G(eps) and the "
                    "integrated-tail bound (2G/sigma) Q1((sigma/G)(eps - G^2/(2 sigma^2))) that dominates it.")
    b.add_argument("--noise-multiplier", type=exact_text, required=True, help="sigma/G > 0")
    b.add_argument("--epsilon", type=exact_text, required=True, help="epsilon >= G^2/(2 sigma^2)")
    add_output_options(b)
    b.set_defaults(func=run_gaussian_benchmark)


def _params(args) -> dict:
    params = dict(EXAMPLE_4_8) if args.example == "4.8" else {}
    for key in ("n", "d", "mu", "zeta", "loss", "L1", "L2", "L3", "eta", "noise_multiplier", "sigma", "u",
                "iterations", "epsilon", "target_delta"):
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
    for key, flag in (("n", "--n"), ("d", "--d"), ("mu", "--mu"), ("zeta", "--zeta"), ("u", "--u"),
                      ("epsilon", "--epsilon")):
        if key not in prm:
            raise InputError(flag, "required (or use --example 4.8)")
    loss = make_loss(prm.get("loss"), prm.get("L1"), prm.get("L2"), prm.get("L3"))
    problem = make_problem(n=prm["n"], d=prm["d"], mu=prm["mu"], zeta=prm["zeta"], loss=loss, u=prm["u"],
                           sigma=prm.get("sigma"), noise_multiplier=prm.get("noise_multiplier"),
                           eta=prm.get("eta"))

    def progress(N):
        if sys.stderr.isatty():
            sys.stderr.write(f"\rTheorem C.13 search: N = {N} ...")
            sys.stderr.flush()

    cert = certify_theorem_4_1(problem, prm["epsilon"], prm.get("iterations"), prm.get("target_delta"),
                               progress=progress)
    if sys.stderr.isatty() and "target_delta" in prm:
        sys.stderr.write("\r" + " " * 40 + "\r")
    emit(cert, summary_theorem_4_1(cert), args)
    return 0


def run_gaussian_benchmark(args) -> int:
    cert = certify_gaussian_benchmark(args.noise_multiplier, args.epsilon)
    emit(cert, summary_generic(cert, "Appendix C.5 (Watkins-Arora 2026): exact Gaussian benchmark"), args)
    return 0


# --------------------------------------------------------------------------------------------
# Summaries
# --------------------------------------------------------------------------------------------
def _row(cert: Certificate, name: str, digits: int = 10) -> str:
    q = cert.quantities[name]
    if q.integer:
        enclosure = upper_decimal(q.value, 30).split("e")[0] if False else str(int(q.value.mid().fmpq().p))
        return f"  {name:<26}{q.equation:<16}{enclosure:<44}{q.description}"
    enclosure = f"[{lower_decimal(q.value, digits)}, {upper_decimal(q.value, digits)}]"
    return f"  {name:<26}{q.equation:<16}{enclosure:<44}{q.description}"


def _claims(cert: Certificate) -> list[str]:
    return [f"  [{'proved' if c.holds else 'FALSE '}] {c.statement}   {c.equation}" for c in cert.claims]


def summary_generic(cert: Certificate, title: str) -> str:
    lines = [title, "inputs: " + " ".join(f"{k}={v}" for k, v in cert.inputs.items()),
             f"working precision: {cert.precision} bits; enclosures rounded outward", "",
             f"  {'quantity':<26}{'equation':<16}{'enclosure [lower, upper]':<44}meaning"]
    lines += [_row(cert, k) for k in cert.quantities]
    lines += ["", "claims (decided in ball arithmetic):"] + _claims(cert)
    return "\n".join(lines) + "\n"


def summary_theorem_4_1(cert: Certificate) -> str:
    w = cert.to_json()["witnesses"]
    title = "Theorem 4.1 (Watkins-Arora 2026): gradient descent on a perturbed GLM"
    text = summary_generic(cert, title)
    eps = cert.inputs["epsilon"]
    N = w["iterations"]
    verdict = [f"", f"verdict: after N = {N} iterations the release is ({eps}, {w['reported_delta']})-DP "
                    f"(Theorem 4.1; delta = truncation + divergence, each an upper bound)."]
    if "theorem_C13" in w:
        c = w["theorem_C13"]
        counts = {}
        for run in c["failures"]:
            counts[run["reason"]] = counts.get(run["reason"], 0) + run["to"] - run["from"] + 1
        why = ", ".join(f"{n} x '{r}'" for r, n in counts.items())
        dN = cert.quantities["delta_N"].value
        verdict.append(f"Theorem C.13 (radii of C.4): first passing N = {c['first_passing_iterations']} with "
                       f"delta_N({eps}) <= {upper_decimal(dN, 9)} <= {cert.inputs['target_delta']}; "
                       f"smaller N fail: {why}.")
    return text + "\n".join(verdict) + "\n"
