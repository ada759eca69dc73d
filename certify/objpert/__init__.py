"""Watkins-Arora (2026): gradient descent on perturbed objectives.

Modules follow the paper: ``problem`` (Section 3, the GLM constants), ``privacy`` (Theorem 4.1 and
Theorem C.13), ``benchmark`` (Appendix C.5), ``certificates`` (certificate producers and the
evaluators the checker uses), ``tables`` (the published privacy numbers re-derived),
``commands`` (the CLI), ``proofs`` (the proof obligations of the paper's hand calculations).
"""

# registry hooks (see certify/registry.py)
KEY = "watkins-arora"
TITLE = "Watkins & Arora (2026), gradient descent on perturbed objectives"
COMMANDS = {"objpert": "certify.objpert.commands", "calibrate": "certify.objpert.commands", "gaussian-benchmark": "certify.objpert.commands"}
KINDS = {
    "objpert/theorem-4.1": "certify.objpert.certificates",
    "objpert/gaussian-benchmark": "certify.objpert.certificates",
    "objpert/calibration-4.13": "certify.objpert.calibrate",
    "objpert/calibration-C13": "certify.objpert.calibrate",
}
PROOFS = "certify.objpert.proofs"
TABLES = "certify.objpert.tables"
