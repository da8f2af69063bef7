"""Limits every command shares, in a module that imports nothing (``--help`` reads them too)."""

# Stored integers are values up to this many digits (README "Limits"), printed in full.
MAX_INT_DIGITS = 20_000
