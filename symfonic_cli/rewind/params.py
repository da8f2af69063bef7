"""``thread rewind``'s parameters, declared once (changes/params.py): the command's options
(cli/rewind.py) and ``api.rewind``'s keywords are built from ``PARAMS``, in the command's order;
``RewindRequest`` holds the checked values the run takes (rewind/run.py)."""

from __future__ import annotations

from symfonic_cli.changes import params as p
from symfonic_cli.limits import MAX_COUNT


def _idle(value: object, spelled: str) -> object:
    from symfonic_cli.rewind.run import idle_window

    return idle_window(value)


PARAMS: tuple[p.Param, ...] = (
    p.Param("thread", "key", None, "Thread key tenant:sub:session.", ("--thread", "-t")),
    p.TENANT, p.SUB_TENANT, p.SESSION,
    p.Param("to", "text", None, "The checkpoint to go back to: its id, or -N (N checkpoints back on the root namespace, -1 the "
                                "newest, as thread diff counts).", ("--to",)),
    p.Param("before_message", "int", None, "Go back to before transcript message INDEX (as transcript show numbers them): the "
                                           "newest checkpoint that does not hold it yet.", ("--before-message",),
            low=-MAX_COUNT, high=MAX_COUNT, cli_range=False),
    p.Param("idle_for", "duration", "5m", "Refuse a thread written within this time (exit 14): the agent may be mid-run (default "
                                          "5m; 0 allows it).", ("--idle-for",), convert=_idle),
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
