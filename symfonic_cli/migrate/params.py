"""``migrate``'s parameters, declared once (changes/params.py): the command's options
(cli/migrate.py) and ``api.migrate``'s arguments are built from ``PARAMS``, in the command's order
(``source``, ``target``: the API's positional arguments); ``MigrateRequest`` holds the checked
values the run takes (migrate/command.py)."""

from __future__ import annotations

from symfonic_cli.changes import params as p
from symfonic_cli.limits import MAX_JOBS

PARAMS: tuple[p.Param, ...] = (
    p.Param("source", "text", None, "Source store (URL, file path or config name); opened read-only.", ("--from",)),
    p.Param("target", "text", None, "Target store (URL, file path or config name).", ("--to",)),
    p.Param("thread", "keys", None, "A thread key (repeatable).", ("--thread", "-t")),
    p.Param("tenant", "text", None, "Every thread of a tenant (or one with --session).", ("--tenant",)),
    p.SUB_TENANT,
    p.Param("session", "text", None, "With --tenant: one session's thread.", ("--session",)),
    p.Param("from_file", "path", None, "A file of thread keys, one per line ('-' for stdin).", ("--from-file",)),
    p.Param("all_threads", "flag", False, "Every thread of the source.", ("--all",)),
    p.Param("dry_run", "flag", False, "Show per thread what would be copied, skipped or in conflict; write nothing.", ("--dry-run",)),
    p.Param("verify_only", "flag", False, "Only compare the target with the source; write nothing.", ("--verify-only",)),
    p.Param("init_target", "flag", False, "Run the target saver's own setup() first (creates its tables).", ("--init-target",)),
    p.Param("jobs", "int", None, "Copy N threads at a time (worker processes; each thread still one transaction). Default: one per "
                                 "CPU, up to 4, towards a database server for 64+ threads; else 1.", ("--jobs", "-j"),
            low=1, high=MAX_JOBS),
    # The command line's alone: the Python API writes an encrypted source's target encrypted.
    p.Param("to_plaintext", "flag", False, "An encrypted source (EncryptedSerializer) is written to the target decrypted; by "
                                           "default the target is encrypted with the same key.", ("--to-plaintext",), api=False),
    # The Python API's alone: the command line takes the root options and the config file's entries.
    p.Param("source_options", "options", None), p.Param("target_options", "options", None),
    p.LOCK_TIMEOUT,
    p.Param("wait", "flag", False, "Another migrate, erase or prune changes the target: wait for it to finish (default: exit 10, "
                                   "naming it).", ("--wait",)),
    p.MAX_DURATION, p.PAUSE, p.MAX_RATE_PARAM,
)


class MigrateRequest(p.Request):
    """A migrate: the stores (``source``, ``target``: StoreLocations) and their connection options,
    the selection options as given (checked once both stores are open: a store error comes first),
    each of ``PARAMS`` checked, and the run's pace."""

    PARAMS = PARAMS
    FIXED = ("source", "target", "source_options", "target_options")
    EXTRA = {"selection_options": {}, "pace": None}

    @property
    def mode(self) -> str:
        return "dry-run" if self.dry_run else "verify-only" if self.verify_only else "copy"
