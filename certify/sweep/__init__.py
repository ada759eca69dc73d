"""``certify sweep``: many certifying queries fanned out on an executor (Dask distributed or a local process pool).

* :mod:`.queries`  reading a CSV / JSON Lines file of queries into rows of exact text;
* :mod:`.runner`   turning a row into the argv of a sub-command, running it in a worker and capturing its certificate;
* :mod:`.executor` one interface (:class:`~.executor.Executor`) over Dask distributed and a local process pool;
* :mod:`.commands` the ``certify sweep`` command: certificates and ``summary.csv`` in the output folder, resumable.
"""

# registry hooks (see certify/registry.py)
KEY = "sweep"
COMMANDS = {"sweep": "certify.sweep.commands"}
