"""Old import names, kept for code written before symfonic_cli/clock.py (the one clock); new code
imports the clock."""

from symfonic_cli.clock import checkpoint_id_time, iso_utc

__all__ = ["checkpoint_id_time", "iso_utc"]
