"""``thread rewind``'s parameters, declared once (changes/params.py): the command's options
(cli/rewind.py) and ``api.rewind``'s keywords are built from ``PARAMS``, in the command's order;
``RewindRequest`` holds the checked values the run takes (rewind/run.py)."""

from __future__ import annotations

from datetime import timedelta

from symfonic_cli.changes import params as p
from symfonic_cli.limits import MAX_COUNT


def idle_window(value: object, spelled: str = "--idle-for") -> timedelta:
    """--idle-for: a duration (5m, 90s, 2h; a bare number is minutes), or 0: no refusal."""
    from symfonic_cli.clock import parse_duration

    if isinstance(value, timedelta):
        if value < timedelta(0):
            from symfonic_cli.errors import UsageError

            raise UsageError("idle_for must not be negative")
        return value
    if not isinstance(value, str):
        from symfonic_cli.errors import UsageError

        raise UsageError("idle_for must be a duration (e.g. '5m'), 0, or a timedelta")
    return parse_duration(value, option="--idle-for", bare_unit="m")


PARAMS: tuple[p.Param, ...] = (
    p.Param("thread", "key", None, "Thread key tenant:sub:session.", ("--thread", "-t")),
    p.TENANT, p.SUB_TENANT, p.SESSION,
    p.Param("to", "text", None, "The checkpoint to go back to: its id, or -N (N checkpoints back on the root namespace, -1 the "
                                "newest, as thread diff counts).", ("--to",)),
    p.Param("before_message", "int", None, "Go back to before transcript message INDEX (as transcript show numbers them): the "
                                           "newest checkpoint that does not hold it yet.", ("--before-message",),
            low=-MAX_COUNT, high=MAX_COUNT, cli_range=False),
    p.Param("idle_for", "duration", "5m", "Refuse a thread written within this time (exit 14): the agent may be mid-run (default "
                                          "5m; 0 allows it).", ("--idle-for",), convert=idle_window),
    p.Param("dry_run", "flag", False, "Show the plan and stop; nothing is written.", ("--dry-run",)),
    p.yes("Rewind"),
    p.Param("receipt", "path", None, "Also append the receipt to this JSONL audit file (0600, fsync'd).", ("--receipt",)),
    p.operator("rewinds"), p.TICKET, p.LOCK_TIMEOUT, p.WAIT,
)


class RewindRequest(p.Request):
    """A rewind: the store, the thread (``key``), each of ``PARAMS`` checked, what the receipt
    records as asked (``selection``), and an API plan's head (``expected_head``: a thread
    written since is refused, HeadMoved)."""

    PARAMS = PARAMS
    FIXED = ("location", "options", "key")
    EXTRA = {"selection": {}, "expected_head": None}
