"""The one way a changing run is started, by either front end: the command line (cli/prune.py,
cli/erase.py, ...) and the Python API's functions (api/changes.py) hand their declared values
(changes/params.py, each operation's params.py) and a ``Front`` to ``prune``, ``erase``, ...
here, which choose the threads, check the values, build the request and run the operation's
driver: the plan, the confirmation the front's Report asks (a terminal's typed answer, or
``yes``), each thread, and the outcome as data (an EraseOutcome, or the Report's record).

A ``Front`` is what differs: the Environment, the Report, how the store is found (a command
line's ``--store`` and config, or the API's argument) and the spelling of what it names in an
error (``--older-than`` or ``older_than``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class Front:
    environment: Any  # symfonic_cli.environment.Environment
    report: Any  # changes/report.Report: cli/report.TextReport or api/report.Collected
    cli: bool  # errors name the options (--keep), else the API's keywords (keep)
    place: Callable[[], tuple[Any, dict[str, Any]]]  # the store's StoreLocation and connection options
    opener: Callable[[], Any]  # the store read-only, for a selection that lists threads


def _selection(front: Front, command: str, values: dict[str, Any], **extra: Any) -> Any:
    """The threads: selection.choose, every selection rule in one place (a sweep's cut-off fixed once)."""
    from symfonic_cli.selection import choose

    names = ("thread", "tenant", "sub_tenant", "session", "all_sessions", "from_file", "inactive_for", "inactive_since",
             "batch_size", "missing_ok")
    given = {n: values[n] for n in names if n in values}
    return choose(command, opener=front.opener, api=not front.cli, environment=front.environment, **given, **extra)


def prune_request(front: Front, given: dict[str, Any]) -> Any:
    """A prune's request (prune/params.py): its threads chosen, every value checked."""
    from symfonic_cli.changes.params import declared, pace
    from symfonic_cli.prune.params import PARAMS, PruneRequest
    from symfonic_cli.selection import PRUNE

    chosen = _selection(front, PRUNE, given, all_threads=given.get("all_threads", False), listed_only=True)
    values = declared(PARAMS, given, cli=front.cli)
    location, options = front.place()
    return PruneRequest(location=location, options=options, selection=chosen, pace=pace(values, cli=front.cli), **values)


def run_prune(request: Any, environment: Any, report: Any) -> Any:
    """prune/run.py: the plan, the report's confirmation, each thread; its EraseOutcome, or None when the report streamed it."""
    from symfonic_cli.prune.run import run

    return run(request, environment, report)


def prune(front: Front, given: dict[str, Any]) -> Any:
    """Prune what ``given`` selects."""
    return run_prune(prune_request(front, given), front.environment, front.report)


def erase_request(front: Front, given: dict[str, Any]) -> Any:
    """An erase's request (erase/params.py): its threads chosen (a retention sweep's cut-off fixed
    here, once; each thread re-checked against it), every value checked."""
    from symfonic_cli.changes.params import declared, pace
    from symfonic_cli.erase.params import PARAMS, EraseRequest
    from symfonic_cli.selection import ERASE

    chosen = _selection(front, ERASE, given)
    values = declared(PARAMS, given, cli=front.cli)
    location, options = front.place()
    return EraseRequest(location=location, options=options, selection=chosen, pace=pace(values, cli=front.cli), **values)


def run_erase(request: Any, environment: Any, report: Any) -> Any:
    """erase/run.py (a sweep: erase/sweep.py): the plan, the report's confirmation, each thread;
    the EraseOutcome (None when the report streamed it)."""
    from symfonic_cli.erase.run import run

    return run(request, environment, report)


def erase(front: Front, given: dict[str, Any]) -> Any:
    """Erase what ``given`` selects."""
    return run_erase(erase_request(front, given), front.environment, front.report)


def rewind_request(front: Front, given: dict[str, Any]) -> Any:
    """A rewind's request (rewind/params.py): its one thread (``thread``: a list, as --thread, a
    second refused), every value checked."""
    from symfonic_cli.changes.params import declared
    from symfonic_cli.rewind.params import PARAMS, RewindRequest
    from symfonic_cli.selection import one_thread

    chosen = one_thread(given.get("thread"), given.get("tenant"), given.get("sub_tenant"), given.get("session"))
    values = declared(PARAMS, given, cli=front.cli)
    location, options = front.place()
    return RewindRequest(location=location, options=options, key=chosen, selection={"thread": chosen}, **values)


def run_rewind(request: Any, environment: Any, report: Any) -> Any:
    """rewind/run.py: the plan, the report's confirmation, the copy written; its EraseOutcome."""
    from symfonic_cli.rewind.run import run

    return run(request, environment, report)


def rewind(front: Front, given: dict[str, Any]) -> Any:
    """Rewind the thread ``given`` names."""
    return run_rewind(rewind_request(front, given), front.environment, front.report)
