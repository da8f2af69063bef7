"""The real saver wrapper that writes envelopes and old clocks: it lives in the library
(symfonic_cli/demo/savers.py), which the demo and the benchmarks share; the tests import it from here too."""

from symfonic_cli.demo.savers import NO_ENVELOPE, EnvelopeSaver, migrated, shifted_id

__all__ = ["NO_ENVELOPE", "EnvelopeSaver", "migrated", "shifted_id"]
