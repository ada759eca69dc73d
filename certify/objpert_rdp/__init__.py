"""The referee report on arXiv:2411.13682: the objective-perturbation Renyi curve (Corollary 5.2)
as a certified accountant (``certify objpert-rdp``).

Modules: ``curve`` (the Renyi bound, its zCDP constant and (eps, delta) profile in balls),
``certificates`` (producer and evaluator of the ``referee/objpert-rdp`` certificate), ``commands``
(the CLI), ``proofs`` (the hand calculations behind the curve).

The certificate kind keeps its name ``referee/objpert-rdp`` and the proofs report its key ``referee``.
"""

# registry hooks (see certify/registry.py)
KEY = "referee"
TITLE = "Referee report on arXiv:2411.13682 (objective perturbation, Corollary 5.2)"
COMMANDS = {"objpert-rdp": "certify.objpert_rdp.commands"}
KINDS = {"referee/objpert-rdp": "certify.objpert_rdp.certificates"}
PROOFS = "certify.objpert_rdp.proofs"
