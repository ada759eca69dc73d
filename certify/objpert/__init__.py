"""Watkins-Arora (2026): gradient descent on perturbed objectives.

Modules follow the paper: ``problem`` (Section 3, the GLM constants), ``privacy`` (Theorem 4.1 and
Theorem C.13), ``benchmark`` (Appendix C.5), ``certificates`` (certificate producers and the
evaluators the checker uses), ``tables`` (the published privacy numbers re-derived),
``commands`` (the CLI).
"""
from . import calibrate, certificates  # noqa: F401  (register the certificate kinds with the checker)
