"""certify: published differential-privacy bounds evaluated as proven enclosures (Arb balls)."""

import sys

__version__ = "0.1.0"

# Exact dyadic endpoints can exceed Python's default int-to-str limit of 4300 digits (rho is of order p^2 in Bok's
# accountant: at p = 1e-2200 it is ~1e-4400, ~4500 decimal digits in a certificate's exact text), a ValueError,
# i.e. a crash. Raise the limit (bounded: 100000 digits still refuses absurd conversions) for producer and checker
# alike, whichever paper's modules a process imports.
if 0 < sys.get_int_max_str_digits() < 100_000:
    sys.set_int_max_str_digits(100_000)
