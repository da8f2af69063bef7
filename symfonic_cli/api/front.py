"""The one way a changing run is started, by either front end: the command line (cli/prune.py,
cli/erase.py, ...) and the Python API's functions (api/changes.py) hand a ``Front``, the store
they name and their declared values (changes/params.py, each operation's params.py) to
``prune``, ``erase``, ... here, which choose the threads, find the store (``find_store``), check
the values, build the request and run the operation's driver on the store opened once: the plan,
the confirmation the front's Report asks (a terminal's typed answer, or ``yes``), each thread,
and how the run ended (the Report's ``ended``, told by the driver before the error that ends the run).

A ``Front`` is what differs between front ends, never the store itself: the Environment, the
Report, the connection options (the command line's root options, or the API's keywords) and the
spelling of what it names in an error (``--older-than`` or ``older_than``; the API function's name).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Front:
    environment: Any  # symfonic_cli.environment.Environment
    report: Any  # changes/report.Report: cli/report.TextReport or api/report.Collected
    cli: bool  # errors name the options (--keep), else the API's keywords (keep)
    connection: dict[str, Any]  # the store options: the command line's root options, or the API's keywords
    name: str = ""  # the API function, named in its errors about the store argument


def find_store(front: Front, value: Any, *, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
    """The store a front end names, found (not opened): its StoreLocation and connection options.
    The command line's ``--store`` (None: $SYMFONIC_STORE), the config entry's options under the
    root options; the Python API's argument checked (errors name the function), ``options``
    (migrate's, per store; else the front's) over the entry's."""
    from symfonic_cli.api.opening import store_argument, store_options
    from symfonic_cli.location import resolve_store

    if not front.cli:
        connection = front.connection if options is None else options
        location = store_argument(front.name, value, connection)
        return location, store_options(location, connection)
    location = resolve_store(value)
    return location, {k: v for k, v in store_options(location, front.connection).items() if k != "erase_extra"}


def read_only(front: Front, found: tuple[Any, dict[str, Any]]) -> Any:
    """The store ``found`` (``find_store``) opened read-only, for a selection that lists threads;
    what the driver warned about while opening told to the front's Report (a command line writes it)."""
    from symfonic_cli.api.opening import open_backend

    store = open_backend(*found)
    front.report.opened(store.open_warnings)
    return store


def _selection(front: Front, store: Any, command: str, values: dict[str, Any],
               **extra: Any) -> tuple[Any, tuple[Any, dict[str, Any]]]:
    """The threads: selection.choose, every selection rule in one place (a sweep's cut-off fixed once);
    and the store ``store`` names, found once (``find_store``), after the selection's own errors: opened
    read-only only when a selection lists threads."""
    from symfonic_cli.selection import choose

    found: list[tuple[Any, dict[str, Any]]] = []

    def opener() -> Any:
        found.append(find_store(front, store))
        return read_only(front, found[0])

    names = ("thread", "tenant", "sub_tenant", "session", "all_sessions", "from_file", "inactive_for", "inactive_since",
             "batch_size", "missing_ok")
    given = {n: values[n] for n in names if n in values}
    chosen = choose(command, opener=opener, api=not front.cli, environment=front.environment, **given, **extra)
    return chosen, found[0] if found else find_store(front, store)


def _opened(request: Any, report: Any, *, writable: bool) -> Any:
    """The store a request names, opened once for its driver; what the driver warned about while
    opening (MongoDB's) told to the report, for every operation alike."""
    from symfonic_cli.api.opening import open_changing

    store = open_changing(request.location, request.options, writable=writable)
    report.opened(store.open_warnings)
    return store


def _sessions(request: Any) -> Any:
    """How a run's other ``--jobs`` sessions are opened: each as its own store was, writable, by the one opener."""
    from symfonic_cli.api.opening import open_changing

    return lambda: open_changing(request.location, request.options, writable=True)


def prune_request(front: Front, store: Any, given: dict[str, Any]) -> Any:
    """A prune's request (prune/params.py): its threads chosen, every value checked."""
    from symfonic_cli.changes.params import declared, pace
    from symfonic_cli.prune.params import PARAMS, PruneRequest
    from symfonic_cli.prune.run import check
    from symfonic_cli.selection import PRUNE

    values = declared(PARAMS, given, cli=front.cli)  # checked before a store is opened (a selection may open it)
    chosen, (location, options) = _selection(front, store, PRUNE, given, all_threads=given.get("all_threads", False),
                                             listed_only=True)
    request = PruneRequest(location=location, options=options, selection=chosen, pace=pace(values, cli=front.cli), **values)
    check(request)
    return request


def run_prune(request: Any, environment: Any, report: Any) -> Any:
    """prune/run.py on the store opened here: the plan, the report's confirmation, each thread, the end."""
    from symfonic_cli.prune.run import prune_threads

    return prune_threads(_opened(request, report, writable=not request.dry_run), request, environment, report,
                         open_session=_sessions(request))


def prune(front: Front, store: Any, given: dict[str, Any]) -> None:
    """Prune what ``given`` selects in ``store``; how it ended told to the front's Report (by the driver)."""
    run_prune(prune_request(front, store, given), front.environment, front.report)


def erase_request(front: Front, store: Any, given: dict[str, Any]) -> Any:
    """An erase's request (erase/params.py): its threads chosen (a retention sweep's cut-off fixed
    here, once; each thread re-checked against it), every value checked."""
    from symfonic_cli.changes.params import declared, pace
    from symfonic_cli.erase.params import PARAMS, EraseRequest
    from symfonic_cli.erase.run import check
    from symfonic_cli.selection import ERASE

    values = declared(PARAMS, given, cli=front.cli)
    chosen, (location, options) = _selection(front, store, ERASE, given)
    request = EraseRequest(location=location, options=options, selection=chosen, pace=pace(values, cli=front.cli), **values)
    check(request)
    return request


def run_erase(request: Any, environment: Any, report: Any) -> Any:
    """erase/run.py (a sweep: erase/sweep.py) on the store opened here: the plan, the report's
    confirmation, each thread, the end."""
    from symfonic_cli.erase.run import erase_threads

    store = _opened(request, report, writable=not request.dry_run)
    if request.selection.window is not None:  # a retention sweep: any number of threads, batch by batch
        from symfonic_cli.erase.sweep import run_sweep

        return run_sweep(store, request, environment, report, open_session=_sessions(request))
    return erase_threads(store, request, environment, report)


def erase(front: Front, store: Any, given: dict[str, Any]) -> None:
    """Erase what ``given`` selects in ``store``; how it ended told to the front's Report (by the driver)."""
    run_erase(erase_request(front, store, given), front.environment, front.report)


def rewind_request(front: Front, store: Any, given: dict[str, Any]) -> Any:
    """A rewind's request (rewind/params.py): its one thread (``thread``: a list, as --thread, a
    second refused), every value checked."""
    from symfonic_cli.changes.params import declared
    from symfonic_cli.rewind.params import PARAMS, RewindRequest
    from symfonic_cli.selection import one_thread

    chosen = one_thread(given.get("thread"), given.get("tenant"), given.get("sub_tenant"), given.get("session"))
    values = declared(PARAMS, given, cli=front.cli)
    location, options = find_store(front, store)
    return RewindRequest(location=location, options=options, key=chosen, selection={"thread": chosen}, **values)


def run_rewind(request: Any, environment: Any, report: Any) -> Any:
    """rewind/run.py on the store opened here: the plan, the report's confirmation, the copy
    written, the end."""
    from symfonic_cli.rewind.run import rewind_thread

    return rewind_thread(_opened(request, report, writable=not request.dry_run), request, environment, report)


def rewind(front: Front, store: Any, given: dict[str, Any]) -> None:
    """Rewind the thread ``given`` names in ``store``; how it ended told to the front's Report (by the driver)."""
    run_rewind(rewind_request(front, store, given), front.environment, front.report)


def export_request(front: Front, store: Any, given: dict[str, Any]) -> Any:
    """An export's request (export/params.py): the bundle's path given, its threads chosen (the
    same selections as erase: selection.py's ERASE rules), every value checked."""
    import os

    from symfonic_cli.changes.params import declared
    from symfonic_cli.errors import UsageError
    from symfonic_cli.export.params import PARAMS, ExportRequest
    from symfonic_cli.selection import ERASE

    output = given.get("output")
    if isinstance(output, os.PathLike):
        output = os.fspath(output)
    if not isinstance(output, str) or not output:
        raise UsageError(f"where to? pass {'--output' if front.cli else 'output'} PATH (a directory, or a .zip / .tar.gz file)")
    if front.cli:
        _refuse_file_name(output)
    values = declared(PARAMS, given, cli=front.cli)
    chosen, (location, options) = _selection(front, store, ERASE, given, listed_only=True)
    values.update(output=output, tenant=chosen.tenant, sub_tenant=chosen.sub_tenant)
    return ExportRequest(location=location, options=options, selection=chosen.receipt,
                         keys=list(chosen.keys) if chosen.keys is not None else None,
                         prefix=chosen.prefix if chosen.window is None else None, window=chosen.window, **values)


def run_export(request: Any, environment: Any, report: Any) -> Any:
    """export/run.py on the store opened here (read-only), once the output is checked: the bundle
    written; its ExportResult."""
    from symfonic_cli.export.run import check_output, export_threads

    kind = check_output(request)  # a refused --output costs no connection
    return export_threads(_opened(request, report, writable=False), request, environment, report, kind=kind)


def plan_export(request: Any, environment: Any, report: Any) -> None:
    """export/run.py's plan on the store opened here: the output checked, the threads it would
    write (kept by the report; the store's open warnings are no one's)."""
    from symfonic_cli.api.opening import open_changing
    from symfonic_cli.export.run import check_output, plan_threads

    kind = check_output(request)
    report.whole(plan_threads(open_changing(request.location, request.options, writable=False), request, kind=kind))


def export(front: Front, store: Any, given: dict[str, Any]) -> Any:
    """Export what ``given`` selects in ``store`` to ``given["output"]``."""
    return run_export(export_request(front, store, given), front.environment, front.report)


# Names that say "a file of another kind": a bundle there would be a directory named out.json.
_FILE_SUFFIXES = (".json", ".jsonl", ".ndjson", ".txt", ".csv", ".md", ".html", ".log", ".pdf",
                  ".gz", ".tar", ".tgz", ".bz2", ".xz", ".zst", ".7z", ".rar")


def _refuse_file_name(output: str) -> None:
    """--output naming a file of another kind (the command line's: the API writes where it is told)."""
    from symfonic_cli.errors import UsageError

    name = output.rstrip("/").rsplit("/", 1)[-1].lower()
    if name.endswith((".zip", ".tar.gz")) or output.endswith("/"):
        return
    if name.endswith(_FILE_SUFFIXES):
        raise UsageError(
            f"--output '{output}' names a file, but a bundle is a directory or a .zip / .tar.gz archive",
            hint="end the name in .zip or .tar.gz, or name a directory; a trailing '/' keeps any name",
        )


def _migrate_store(front: Front, given: dict[str, Any], role: str) -> tuple[Any, dict[str, Any]]:
    """migrate's source or target found: on the command line its errors name the option typed
    (``--from``, ``--to``), the root options over the config entry's; else ``find_store`` with its own options."""
    if not front.cli:
        return find_store(front, given[role], options=given.get(f"{role}_options") or {})
    from symfonic_cli.api.opening import store_options
    from symfonic_cli.location import resolve_store
    from symfonic_cli.migrate.command import as_option

    location = as_option("--from" if role == "source" else "--to", resolve_store, given[role])
    return location, store_options(location, front.connection)


def migrate_request(front: Front, given: dict[str, Any]) -> Any:
    """A migrate's request (migrate/params.py): the usage errors that need no store first, then
    each value checked and both stores found; the selection is checked once both are open."""
    from symfonic_cli.changes.params import declared, pace
    from symfonic_cli.errors import UsageError
    from symfonic_cli.migrate.command import check_request
    from symfonic_cli.migrate.params import PARAMS, MigrateRequest

    thread = given.get("thread")
    if isinstance(thread, str):
        thread = [thread]
    if not front.cli and given.get("from_file") == "-":
        raise UsageError("from_file '-' reads standard input; pass the keys as thread=[...]")
    source, target = given.get("source"), given.get("target")
    check_request(str(source) if source else None, str(target) if target else None, dry_run=given.get("dry_run", False),
                  verify_only=given.get("verify_only", False), init_target=given.get("init_target", False))
    values = declared(PARAMS, given, cli=front.cli)
    src, src_options = _migrate_store(front, given, "source")
    dst, dst_options = _migrate_store(front, given, "target")
    selection = {"threads": list(thread or []), **{n: values[n] for n in ("tenant", "sub_tenant", "session", "from_file", "all_threads")}}
    values.update(source=src, target=dst, source_options=src_options, target_options=dst_options)
    return MigrateRequest(selection_options=selection, pace=pace(values, cli=front.cli), **values)


def run_migrate(request: Any, environment: Any, report: Any) -> Any:
    """migrate/command.py on the two stores opened here (the source read-only, then the target):
    every selected thread copied (or planned, or compared); its MigrateResult."""
    from symfonic_cli.api.opening import open_changing
    from symfonic_cli.migrate.command import MigrateReport, migrate_stores, open_stores

    report = report or MigrateReport()
    source, target, scratch = open_stores(request, report, open_changing)
    return migrate_stores(source, target, request, environment, report, scratch=scratch)


def migrate(front: Front, given: dict[str, Any]) -> Any:
    """Copy what ``given`` selects from ``given["source"]`` to ``given["target"]``."""
    return run_migrate(migrate_request(front, given), front.environment, front.report)
