"""What a changing run tells its caller, for a front end to render: the records, the events and
the words of the run framework (changes/) and of each operation (prune/, rewind/, migrate/),
re-exported here so that a front end (cli/report.py, cli/confirm.py, cli/*_text.py) imports the API
alone. Each name is imported when first asked for: rendering a prune loads no migrate."""

from __future__ import annotations

import importlib
from typing import Any

TYPE_CHECKING = False  # typing.TYPE_CHECKING; the type checker reads the names' homes
if TYPE_CHECKING:
    from symfonic_cli.changes import plan as erase_plan
    from symfonic_cli.changes.plan import NOT_ERASED
    from symfonic_cli.changes.report import Confirmation, Report, RequestView, SweepView, ThreadDone
    from symfonic_cli.changes.result import EraseOutcome
    from symfonic_cli.migrate.command import Copying, MigrateReport, MigrateResult
    from symfonic_cli.model.prune import NOT_FOUND, NOTHING, PRUNED, SKIPPED
    from symfonic_cli.prune.records import TIMESTAMPS, PruneOutcome, PruneTotals, PruneView
    from symfonic_cli.rewind.plan import Point, RewindView
    from symfonic_cli.rewind.run import RewindOutcome

_HOMES = {
    "erase_plan": ("symfonic_cli.changes.plan", None), "NOT_ERASED": ("symfonic_cli.changes.plan", "NOT_ERASED"),
    "Confirmation": ("symfonic_cli.changes.report", "Confirmation"), "Report": ("symfonic_cli.changes.report", "Report"),
    "RequestView": ("symfonic_cli.changes.report", "RequestView"), "SweepView": ("symfonic_cli.changes.report", "SweepView"),
    "ThreadDone": ("symfonic_cli.changes.report", "ThreadDone"), "EraseOutcome": ("symfonic_cli.changes.result", "EraseOutcome"),
    "Copying": ("symfonic_cli.migrate.command", "Copying"), "MigrateReport": ("symfonic_cli.migrate.command", "MigrateReport"),
    "MigrateResult": ("symfonic_cli.migrate.command", "MigrateResult"),
    "NOT_FOUND": ("symfonic_cli.model.prune", "NOT_FOUND"), "NOTHING": ("symfonic_cli.model.prune", "NOTHING"),
    "PRUNED": ("symfonic_cli.model.prune", "PRUNED"), "SKIPPED": ("symfonic_cli.model.prune", "SKIPPED"),
    "TIMESTAMPS": ("symfonic_cli.prune.records", "TIMESTAMPS"), "PruneOutcome": ("symfonic_cli.prune.records", "PruneOutcome"),
    "PruneTotals": ("symfonic_cli.prune.records", "PruneTotals"), "PruneView": ("symfonic_cli.prune.records", "PruneView"),
    "Point": ("symfonic_cli.rewind.plan", "Point"), "RewindView": ("symfonic_cli.rewind.plan", "RewindView"),
    "RewindOutcome": ("symfonic_cli.rewind.run", "RewindOutcome"),
}

__all__ = ["NOT_ERASED", "NOT_FOUND", "NOTHING", "PRUNED", "SKIPPED", "TIMESTAMPS", "Confirmation", "Copying", "EraseOutcome", "MigrateReport", "MigrateResult", "Point",
           "PruneOutcome", "PruneTotals", "PruneView", "Report", "RequestView", "RewindOutcome", "RewindView", "SweepView",
           "ThreadDone", "erase_plan"]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _HOMES[name]
    found = importlib.import_module(module)
    return found if attribute is None else getattr(found, attribute)
