import sys

from . import signals

signals.early()  # a signal during the imports below ends the program with one line, no traceback

from .cli import main  # noqa: E402

sys.exit(main())
