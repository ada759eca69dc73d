"""certify: published differential-privacy bounds evaluated as proven enclosures (Arb balls)."""

__version__ = "0.1.0"
