"""``certify dpsgd --accountant pld``: the certified PLD accountant on the command line.

Called from :mod:`certify.dpsgd.commands` after the common flags are parsed; takes the contract from
``--sampling``/``--adjacency`` when those flags exist (default: fixed-size + replace-one, the default of
``certify dpsgd``).
"""

from __future__ import annotations

import sys
import time

from .. import cli
from ..balls import exact_str, fmpq, lower_decimal, upper_decimal
from ..contract import Contract, parse_contract
from . import certify_pld, tightness_note


def composition_text(cert) -> str:
    """How a PLD certificate's steps or events were composed (its ``fft`` witness: certify.pld.certificates,
    certify.events.pld_certificates)."""
    if "fft" in cert.witnesses:
        return "tilted float FFT composition with a proven error bound"
    return "exact integer composition"


def summary(cert, seconds: float) -> str:
    i, q = cert.inputs, cert.quantities
    c = Contract(i["sampling"], i["adjacency"])
    up, lo = q["epsilon_upper"].value, q["epsilon_lower"].value
    width = up - lo
    rel = (up / lo - 1) if lo > 0 else None
    lines = [
        f"DP-SGD with q={i['sampling_rate']}, sigma={i['noise_multiplier']}, T={i['steps']} steps, delta={i['delta']}",
        f"  {c.statement()}",
        f"  accountant: certified PLD (lossless), grid h = {i['grid']} ({composition_text(cert)}, outward rounding)",
        f"  epsilon <= {upper_decimal(up, 6)}   (certified: the run is (epsilon, delta)-DP; rounded up)",
        f"  epsilon >= {lower_decimal(lo, 6)}   (certified lower bound on the exact eps(delta) of the composed dominating pair; rounded down)",
        f"  bracket width {upper_decimal(width, 3)}" + (f"  (eps_up/eps_low - 1 = {upper_decimal(rel, 3)})" if rel is not None else ""),
        f"  delta_up(eps_up) <= {upper_decimal(q['delta_upper'].value, 6)}, delta_low(eps_low) >= {lower_decimal(q['delta_lower'].value, 6)}",
        f"  ({seconds:.2f} s)",
    ]
    return "\n".join(lines) + "\n"


def run_pld(args, contract: Contract, p: fmpq, sigma: fmpq, steps: int, delta: fmpq) -> int:
    """``certify dpsgd --accountant pld`` under ``contract``, the one resolution of what the input declares
    (:func:`certify.poisson.commands.resolve_contract`)."""
    t0 = time.perf_counter()
    c = parse_contract(contract.sampling, contract.adjacency, "pld")
    grid = getattr(args, "grid", None)  # None: the accountant chooses its grid (certify.pld.certify_pld)
    cert = certify_pld(c, exact_str(p), exact_str(sigma), steps, exact_str(delta), grid, method=getattr(args, "composition", None))
    note = tightness_note(cert, auto=grid is None)
    if note is not None:  # one stderr line: a grid too coarse for a useful lower bound, or the auto grid's work cap
        sys.stderr.write(f"certify: {note}\n")
    getattr(args, "emit", cli.emit)(cert, summary(cert, time.perf_counter() - t0), args)  # certify dpsgd's compact --json
    return 0
