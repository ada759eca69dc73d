"""``python -m certify_kernel FILE``: one verdict line on stdout, the exit status of the verdict."""

import os
import sys
from . import check_text
from .document import EXIT_INPUT, MAX_BYTES

def main(argv: list[str]) -> int:
    """Check the one certificate named in argv; bad usage or an unreadable file: one line on stderr, exit 2."""
    if len(argv) != 1:
        print("usage: python -m certify_kernel CERTIFICATE.json", file=sys.stderr)
        return EXIT_INPUT
    path = argv[0]
    try:  # a FIFO, a device or a directory is never opened (a FIFO would block)
        problem = "not a regular file" if os.path.exists(path) and not os.path.isfile(path) else None
        problem = problem or (f"file too large (at most {MAX_BYTES} bytes)" if os.path.getsize(path) > MAX_BYTES else None)
        if problem is None:
            with open(path, "rb") as fh:
                data = fh.read(MAX_BYTES + 1)
    except OSError as err:
        problem = f"cannot read: {err.strerror}"
    if problem:
        print(f"{path}: {problem}", file=sys.stderr)
        return EXIT_INPUT
    verdict = check_text(data)
    print(verdict.message)
    return verdict.status

if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
