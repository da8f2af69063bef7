"""``thread erase``'s parameters, declared once (changes/params.py): the command's options
(cli/erase.py) and ``api.erase``'s keywords are built from ``PARAMS``, in the command's order;
``EraseRequest`` holds the checked values the run takes (erase/run.py, erase/sweep.py)."""

from __future__ import annotations

from functools import cached_property

from symfonic_cli.changes import params as p

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.model.erase import ExtraTable

PARAMS: tuple[p.Param, ...] = (
    p.THREADS, p.TENANT, p.SUB_TENANT, p.SESSION, p.ALL_SESSIONS, p.FROM_FILE,
    p.Param("dry_run", "flag", False, "Show the plan and stop; nothing is deleted.", ("--dry-run",)),
    p.yes("Erase"),
    p.Param("vacuum", "flag", False, "Afterwards rewrite the file (SQLite) / VACUUM the tables (PostgreSQL).", ("--vacuum",)),
    p.Param("grace", "duration", "15m", "Warn about threads active within this time (90s, 15m, 2h, 1d).", ("--grace",),
            convert=p.minutes),
    p.RECEIPT, p.operator("erases"), p.TICKET, p.MISSING_OK,
    p.INACTIVE_FOR, p.INACTIVE_SINCE, p.BATCH_SIZE, p.LOCK_TIMEOUT,
    p.Param("wait", "flag", False, "Another erase or prune runs on the same store: wait for it to finish (default: exit 10, naming "
                                   "it). SQLite: at the end, also wait for readers that keep the -wal from being truncated "
                                   "(default: exit 12).", ("--wait",)),
    p.MAX_DURATION, p.PAUSE, p.MAX_RATE_PARAM, p.MAX_REPLICA_LAG, p.JOBS, p.ON_THREAD,
)


class EraseRequest(p.Request):
    """An erase: the store, its selection (requested keys, a tenant prefix, or a retention window:
    erase/sweep.py), each of ``PARAMS`` checked, and the run's pace."""

    PARAMS = PARAMS
    EXTRA = {"pace": None}

    @cached_property
    def extra(self) -> tuple[ExtraTable, ...]:
        """The store's ``erase_extra`` tables (its config entry's), validated once: a UsageError
        (exit 2) when the request is checked, before the store is opened (erase/run.py ``check``)."""
        from symfonic_cli.erase.extra import parse_extra

        return parse_extra(self.location.options)
