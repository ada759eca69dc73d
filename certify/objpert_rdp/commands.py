"""CLI: ``certify objpert-rdp`` (the referee report's objective-perturbation Renyi curve)."""

from __future__ import annotations

import argparse

from ..balls import lower_decimal, upper_decimal
from ..cli import add_output_options, check_range, emit, exact_text
from .certificates import certify_curve


def register(sub) -> None:
    p = sub.add_parser(
        "objpert-rdp",
        help="certify Renyi/zCDP/(eps, delta) bounds of objective perturbation (Corollary 5.2 of arXiv:2411.13682)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "The Renyi bound of objective perturbation discussed in the referee report on arXiv:2411.13682\n"
            "(its Theorem 5.1 / Corollary 5.2; the same curve as Redberg-Koskela-Wang 2023):\n\n"
            "  D_alpha <= log(1 + s/lambda) + alpha L^2/(2 nu^2) + log(2 Phi((L/nu)(alpha-1)))/(alpha-1),\n\n"
            "its zCDP constant rho_DP = log(1 + s/lambda) + L^2/(2 nu^2) + sqrt(2/pi) L/nu, and the (eps, delta)\n"
            "profile of the dominating privacy loss log(1 + s/lambda) + mu^2/2 + mu|Z| (mu = L/nu):\n"
            "delta(eps) = 2 delta_G(eps - eps_det) above the kink eps_det + mu^2/2, 1 - 2 e^(eps - eps_det) Phi(-mu)\n"
            "below. Every number is a proven enclosure (Arb balls, rounded outward); claims are decided in\n"
            "ball arithmetic and the certificate is re-checked by `certify verify`.\n\n"
            "All numbers are exact: integers, decimals (0.01, 1e-7) or fractions (1/3)."
        ),
        epilog="example: certify objpert-rdp --L 1 --nu 2 --s 1/4 --lambda 1 --alpha 3 --epsilon 2 --delta 1e-6",
    )
    g = p.add_argument_group("mechanism")
    g.add_argument("--L", type=exact_text, required=True, help="Lipschitz constant of the loss, L > 0")
    g.add_argument("--nu", type=exact_text, required=True, help="noise scale of the objective perturbation, nu > 0")
    g.add_argument("--s", type=exact_text, required=True, help="curvature (smoothness) bound of the loss entering log(1 + s/lambda), s >= 0")
    g.add_argument("--lambda", dest="lam", type=exact_text, required=True, help="regulariser lambda > 0")
    g = p.add_argument_group("privacy question (at least one)")
    g.add_argument("--alpha", type=exact_text, help="Renyi order alpha > 1: the Renyi bound D_alpha and D_alpha <= rho_DP alpha")
    g.add_argument("--epsilon", type=exact_text, help="epsilon >= 0: the profile delta(epsilon)")
    g.add_argument(
        "--delta", type=exact_text, help="delta in (0, 1): the smallest epsilon (witnessed bracket, relative width 1e-9) with delta(epsilon) <= delta"
    )
    add_output_options(p)
    p.set_defaults(func=run)


#: which input drives a quantity out of the exact range (cli.check_range), and what is admissible
RANGE_HINTS = {
    "delta_epsilon": ("--epsilon", "an epsilon for which delta(epsilon) stays above 1e-315652"),
    "delta_at_epsilon_upper": ("--delta", "a larger --delta, or a smaller L/nu (--nu larger), so that the bracket's delta stays above 1e-315652"),
    "delta_at_epsilon_lower": ("--delta", "a larger --delta, or a smaller L/nu (--nu larger), so that the bracket's delta stays above 1e-315652"),
}


def _row(cert, name) -> str:
    q = cert.quantities[name]
    return f"  {name:<24}[{lower_decimal(q.value, 10)}, {upper_decimal(q.value, 10)}]  {q.description}"


def run(args) -> int:
    cert = certify_curve(args.L, args.nu, args.s, args.lam, args.alpha, args.epsilon, args.delta)
    check_range(cert, RANGE_HINTS)
    lines = [
        "Objective perturbation, Renyi curve of Corollary 5.2 (arXiv:2411.13682; referee report)",
        "inputs: " + " ".join(f"{k}={v}" for k, v in cert.inputs.items()),
        f"working precision: {cert.precision} bits; enclosures rounded outward",
        "",
    ]
    lines += [_row(cert, k) for k in cert.quantities]
    if cert.claims:
        lines += ["", "claims (decided in ball arithmetic):"]
        lines += [f"  [{'proved' if c.holds else 'FALSE '}] {c.statement}" for c in cert.claims]
    emit(cert, "\n".join(lines) + "\n", args)
    return 0
