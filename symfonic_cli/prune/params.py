"""``thread prune``'s parameters, declared once (changes/params.py): the command's options
(cli/prune.py) and ``api.prune``'s keywords are built from ``PARAMS``, in the command's order;
``PruneRequest`` holds the checked values the run takes (prune/run.py)."""

from __future__ import annotations

from symfonic_cli.changes import params as p
from symfonic_cli.limits import DEFAULT_PIECE, MAX_COUNT, MAX_PIECE

PARAMS: tuple[p.Param, ...] = (
    p.THREADS, p.TENANT, p.SUB_TENANT, p.SESSION, p.ALL_SESSIONS, p.FROM_FILE,
    p.Param("all_threads", "flag", False, "Every thread of the store.", ("--all",)),
    p.Param("keep", "int", 1, "Keep the latest N checkpoints of every namespace (default 1).", ("--keep",), low=1, high=MAX_COUNT),
    p.Param("older_than", "duration", None, "Also keep every checkpoint newer than this (90d, 12h, 2w): prune only what is older.",
            ("--older-than",), convert=p.duration),
    p.Param("dry_run", "flag", False, "Show the plan, make every check, and stop; nothing is deleted.", ("--dry-run",)),
    p.yes("Prune"),
    p.Param("compact", "flag", False, "Afterwards give the space back: SQLite VACUUM, PostgreSQL VACUUM (ANALYZE), MongoDB compact.",
            ("--compact",)),
    p.RECEIPT, p.operator("prunes"), p.TICKET, p.MISSING_OK,
    p.INACTIVE_FOR, p.INACTIVE_SINCE, p.BATCH_SIZE, p.LOCK_TIMEOUT, p.WAIT, p.MAX_DURATION, p.PAUSE, p.MAX_RATE_PARAM,
    p.MAX_REPLICA_LAG,
    p.Param("keep_branches", "flag", False, "Also keep the head of every branch of a forked thread (LangGraph time travel): a "
                                            "checkpoint no other checkpoint names as parent.", ("--keep-branches",)),
    p.Param("piece_size", "int", DEFAULT_PIECE, f"A thread whose prune deletes more than N checkpoints is pruned in several "
                                                f"transactions of at most N, oldest first, each verified and committed "
                                                f"(1 to {MAX_PIECE:,}; default {DEFAULT_PIECE}).", ("--piece-size",),
            low=1, high=MAX_PIECE),
    p.JOBS, p.ON_THREAD,
)


class PruneRequest(p.Request):
    """A prune: the store, its selection (keys, a tenant prefix, every thread or a retention
    window), each of ``PARAMS`` checked, and the run's pace (--pause, --max-rate, --max-replica-lag)."""

    PARAMS = PARAMS
    EXTRA = {"pace": None}
