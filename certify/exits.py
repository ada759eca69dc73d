"""Exit statuses of the ``certify`` command, one meaning each, shared by every sub-command.

==== ==========================================================================================
0    success: computed and certified; ``verify``: consistent and every conclusion holds; ``audit``:
     the claim holds
1    a comparison found a mismatch or a failure (``tables`` mismatch, a ``proofs`` obligation false or
     undecided, ``sweep`` rows that failed)
2    bad input (a parameter outside its admissible range, a malformed or unreadable file, an unknown
     certificate kind, a path that cannot be written); one line on stderr, nothing written
3    undecided: a comparison stayed undecided at the highest working precision
4    ``verify``: the certificate is inconsistent (digest, layout, balls, claims or conclusions disagree
     with the recomputation, or the file is not the canonical document certify writes)
5    ``verify``: the certificate is consistent but proves nothing it states (a hypothesis or a
     conclusion fails)
6    a search stopped at its budget before reaching its tolerance: the bound is valid, only looser
7    ``audit``: not certified (the best certified bound exceeds the claim; nothing refutes it)
8    ``audit``: refuted (a certified lower bound proves the claim false for the contract's worst case)
130  interrupted (Ctrl-C, SIGINT): one line on stderr, no partial file, no process left
143  terminated (SIGTERM): the same
==== ==========================================================================================
"""

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INPUT = 2
EXIT_UNDECIDED = 3
EXIT_INCONSISTENT = 4
EXIT_NOT_PROVED = 5
EXIT_STOPPED_EARLY = 6
EXIT_NOT_CERTIFIED = 7
EXIT_REFUTED = 8
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
