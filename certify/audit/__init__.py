"""``certify audit``: decide a published or internal DP-SGD privacy claim with certified accountants.

:mod:`.claim` (the claim file: loading and validation), :mod:`.audit` (holds / not certified / refuted:
Rényi first, then PLD, and why a PLD lower bound refutes a Poisson add/remove claim), :mod:`.floats`
(dp_accounting's float values for the same contract, not certified), :mod:`.statement` (the plain-language
statement), :mod:`.commands` (the command line).

Python API::

    from certify.audit import load_claim, audit
    v = audit(load_claim("examples/claims/tf_privacy_mnist.json"))
    v.outcome            # "holds" | "not certified" | "refuted"; v.exit_code 0 / 7 / 8
    v.deciding.certificate.dumps()   # the accountant's certificate (certify verify re-checks it)
"""

from .audit import HOLDS, NOT_CERTIFIED, REFUTED, Verdict, audit  # noqa: F401
from .claim import AuditClaim, load_claim, loads_claim, parse_claim  # noqa: F401

# registry hooks (see certify/registry.py)
KEY = "audit"
COMMANDS = {"audit": "certify.audit.commands"}
