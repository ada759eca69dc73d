"""dp_accounting's event algebra, certified by Rényi DP (``certify account``, ``certify.accounting``).

Modules (the event trees are read by :mod:`certify.event_tree`, shared with :mod:`certify.poisson.ecosystem`):
:mod:`.mechanisms` (one module per mechanism: its RDP in balls, the theorem it evaluates), :mod:`.ledger` (the
distinct mechanisms and counts of a release), :mod:`.certificates` (kind ``events/rdp`` and its checker),
:mod:`.accountant` (the order's float choice and the producer), :mod:`.commands` (``certify account``),
:mod:`.proofs` (the obligations behind the closed forms), :mod:`.calibrate` (``certify calibrate-event``: the
smallest noise of a family, kind ``events/rdp-fails``).
"""

# registry hooks (see certify/registry.py)
KEY = "events"
TITLE = "dp_accounting's event algebra in Rényi DP (certify.events)"
COMMANDS = {"account": "certify.events.commands", "calibrate-event": "certify.events.commands"}
KINDS = {"events/rdp": "certify.events.certificates", "events/rdp-fails": "certify.events.calibrate", "events/pld": "certify.events.pld_certificates"}
PROOFS = "certify.events.proofs"
