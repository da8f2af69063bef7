"""``thread export``'s parameters, declared once (changes/params.py): the command's options
(cli/export.py) and ``api.export``'s arguments are built from ``PARAMS``, in the command's order
(``output``: the API's second positional argument); ``ExportRequest`` holds the checked values the
run takes (export/run.py)."""

from __future__ import annotations

from symfonic_cli.changes import params as p

PARAMS: tuple[p.Param, ...] = (
    p.THREADS, p.TENANT, p.SUB_TENANT, p.SESSION, p.ALL_SESSIONS, p.FROM_FILE,
    p.Param("output", "path", None, "The bundle: a directory, or a .zip / .tar.gz file when the name ends so.", ("--output", "-o")),
    p.Param("force", "flag", False, "Replace an existing bundle at --output.", ("--force",)),
    p.Param("tools", "flag", False, "Add the tool-call fields to each transcript row (as transcript show --tools).", ("--tools",)),
    p.Param("with_state", "flag", False, "Add each thread's latest checkpoint channels as state/<name>.json.", ("--with-state",)),
    p.Param("current_only", "flag", False, "Leave out retained/<name>.json: the messages older checkpoints still hold that the "
                                           "current state does not (compaction removed them).", ("--current-only",)),
    p.MISSING_OK, p.INACTIVE_FOR, p.INACTIVE_SINCE, p.BATCH_SIZE,
)


class ExportRequest(p.Request):
    """An export: the store, the selection as the manifest records it (``selection``), the keys
    requested (or None: listed by ``prefix``, or by ``window``, a retention cut-off, under
    ``tenant``/``sub_tenant``), and each of ``PARAMS`` checked."""

    PARAMS = PARAMS
    EXTRA = {"keys": None, "prefix": None, "window": None, "fmt": "text"}
