"""Bok (2026): a Rényi accountant for DP-SGD with fixed-size batches (work in progress)."""
