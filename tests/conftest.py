import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import mpmath  # noqa: E402
import pytest  # noqa: E402

#: the mpmath precision (decimal digits) every test starts at, unless its module sets its own ``MPMATH_DPS``. Set per
#: test, not at import: a module's import-time setting held only until the next module was imported, so a subset run
#: computed some references at another module's precision (and a test that changed it changed it for the next ones).
MPMATH_DPS = 50


@pytest.fixture(autouse=True)
def _mpmath_precision(request):
    """Each test starts at its module's ``MPMATH_DPS`` (else 50 digits) and leaves mpmath's precision as it found it."""
    saved = mpmath.mp.prec
    mpmath.mp.dps = getattr(request.module, "MPMATH_DPS", MPMATH_DPS)
    yield
    mpmath.mp.prec = saved
