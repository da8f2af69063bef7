"""The changing operations as functions: ``erase``, ``export``, ``prune``, ``migrate``. Each takes the explicit choices its command asks for and
returns its result, a ``RunResult`` (changes/result.py: typed, and the mapping the command prints with
``-f json``; ``to_json()`` gives that document). api/plans.py makes a plan of each first (``plan_erase``
...) and runs it (``execute``), through the same functions.

They run the command's own library function (``erase.run``, ``export.run``, ``prune.run``,
``migrate.command``) on a library Environment: nothing is read from or written to the process's
streams, no terminal is ever asked, and the run's events are kept as data (api/report.Collected,
the Report the drivers tell: changes/report.py), never rendered, printed or parsed. ``erase`` and
``prune`` take ``on_thread``: called with each thread as it is done (a ``ThreadDone``: its
``entry`` is the thread's record, as ``-f jsonl`` prints it after the run's head). A real erase needs ``yes=True`` (without it: ``NotConfirmedError``, exit 6,
nothing deleted), as the command without a terminal; so does a real prune. A run that ends in an error raises it (a
``SymfonicError`` with the command's exit code) with the record, when one was made, as ``.result``.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from datetime import timedelta
from typing import Any

from symfonic_cli.api.arguments import checked
from symfonic_cli.changes.result import RunResult  # at run time: annotations are read (api/arguments.py)
from symfonic_cli.changes.steps import pace_of
from symfonic_cli.errors import SymfonicError, UsageError
from symfonic_cli.limits import DEFAULT_LOCK_TIMEOUT

# The root options a store takes (as open_store): kinds.CONNECTION_OPTIONS.

# What runs a request: (request, Environment, api/report.Collected).
Runner = Callable[[Any, Any, Any], Any]


def _environment() -> Any:
    from symfonic_cli.environment import Environment

    return Environment.library()


def _location(name: str, value, options: dict[str, Any]):
    from symfonic_cli.api.store import store_argument
    from symfonic_cli.stores import connection_options

    loc = store_argument(name, value, options)
    return loc, connection_options(loc, options)


# Set by api/plans.py while it makes a plan: the dry run's request and runner are handed to it
# (each operation's arguments checked and its request built once, here, for the plan and its run).
PLANNING: ContextVar[list[tuple[Any, Callable[..., Any]]] | None] = ContextVar("planning", default=None)


def _run(operation: str, request: Any, runner: Callable[..., Any], planner: Runner | None = None,
         on_thread: Callable[[Any], None] | None = None) -> Any:
    """The run's RunResult (changes/result.py: its document, typed); an error that ends the run
    carries it, when one was made, as ``.result``. While a plan is made, the request and its
    runner are handed to it and ``planner`` runs instead (an operation without a dry run)."""
    from symfonic_cli.api.report import Collected
    from symfonic_cli.changes.result import result_of

    planning = PLANNING.get()
    if planning is not None:
        planning.append((request, runner))
        runner = planner or runner
    report = Collected(on_thread)
    try:
        runner(request, _environment(), report)
    except SymfonicError as exc:
        exc.result = result_of(operation, report.value)  # type: ignore[attr-defined]
        raise
    return result_of(operation, report.value)


def _selection(command: str, store: Any, options: dict[str, Any], **given: Any) -> Any:
    """The threads of an erase, export or prune: selection.choose, the command's own resolver, with
    the store read-only for a session across sub-tenants or tenants."""
    from symfonic_cli.selection import ERASE, PRUNE, choose

    def opener() -> Any:
        from symfonic_cli.stores import open_store

        loc, opts = _location(command, store, options)
        return open_store(loc, writable=False, **opts)  # its warnings are no one's: nothing is printed

    return choose(PRUNE if command == "prune" else ERASE, opener=opener, api=True, environment=_environment(), **given)


def _max_duration(value: object) -> timedelta | None:
    from symfonic_cli.clock import parse_duration, positive_duration

    if value is None:
        return None
    if isinstance(value, str):
        return positive_duration(parse_duration(value, option="max_duration"), "max_duration")
    if isinstance(value, timedelta):
        return positive_duration(value, "max_duration")
    raise UsageError("max_duration must be a duration (e.g. '2h') or a timedelta")


def _flag(value: object, name: str) -> bool:
    if type(value) is not bool:
        raise UsageError(f"{name} must be True or False")
    return value


def _check_lock_timeout(value: object) -> None:
    from symfonic_cli.limits import lock_timeout_in_range, lock_timeout_range

    if type(value) not in (int, float) or not lock_timeout_in_range(float(value)):  # type: ignore[arg-type]
        raise UsageError(f"lock_timeout must be a number of seconds, {lock_timeout_range()}")


def _check_receipt_names(operator: str | None, ticket: str | None) -> None:
    if operator is not None and not operator.strip():
        raise UsageError("operator is empty")
    if ticket is not None and not ticket:
        raise UsageError("ticket is empty")


@checked
def export(
    store,
    output: str,
    *,
    thread: str | list[str] | None = None,
    tenant: str | None = None,
    sub_tenant: str | None = None,
    session: str | None = None,
    all_sessions: bool = False,
    from_file: str | None = None,
    inactive_for: str | None = None,
    inactive_since: str | None = None,
    batch_size: int | None = None,
    force: bool = False,
    tools: bool = False,
    with_state: bool = False,
    current_only: bool = False,
    missing_ok: bool = False,
    **options,
) -> RunResult:
    """``thread export -f json``: the bundle at ``output`` (a directory, .zip or .tar.gz) and its record."""
    import os

    from symfonic_cli.export.run import ExportRequest

    if isinstance(output, os.PathLike):
        output = os.fspath(output)
    if not isinstance(output, str) or not output:
        raise UsageError("where to? pass output PATH (a directory, or a .zip / .tar.gz file)")
    chosen = _selection(
        "export", store, options, thread=thread, tenant=tenant, sub_tenant=sub_tenant, session=session,
        all_sessions=all_sessions, from_file=from_file, inactive_for=inactive_for, inactive_since=inactive_since,
        batch_size=batch_size, missing_ok=missing_ok, listed_only=True,
    )
    loc, opts = _location("export", store, options)
    request = ExportRequest(
        location=loc, options=opts, selection=chosen.receipt, output=output,
        keys=list(chosen.keys) if chosen.keys is not None else None,
        prefix=chosen.prefix if chosen.window is None else None, force=force, tools=tools, with_state=with_state,
        current_only=current_only, missing_ok=missing_ok, fmt="json", window=chosen.window, tenant=chosen.tenant, sub_tenant=chosen.sub_tenant,
        batch_size=batch_size,
    )
    return _run("export", request, _export, planner=_export_plan)


def _outcome(run: Callable[..., Any], request: Any, env: Any, report: Any) -> None:
    """A driver's EraseOutcome as its document; an error carrying one hands it over first."""
    try:
        outcome = run(request, env, report)
    except SymfonicError as exc:
        if getattr(exc, "outcome", None) is not None:
            report.whole(exc.outcome.document)  # type: ignore[attr-defined]
        raise
    if outcome is not None:
        report.whole(outcome.document)


def _export(request: Any, env: Any, report: Any) -> None:
    """export/run.run's result, as its document (what ``-f json`` prints)."""
    from symfonic_cli.export.run import run

    report.whole(run(request, env).document())


def _export_plan(request: Any, env: Any, report: Any) -> None:
    from symfonic_cli.export.run import plan

    report.whole(plan(request, env))


def _api_front(name: str, store: Any, options: dict[str, Any], on_thread: Callable[[Any], None] | None = None) -> Any:
    """The Python API's Front (api/front.py): a library Environment, the events kept as data, the
    store as given (its options as open_store's), errors naming the keywords."""
    from symfonic_cli.api.front import Front
    from symfonic_cli.api.report import Collected

    def opener() -> Any:
        from symfonic_cli.stores import open_store

        loc, opts = _location(name, store, options)
        return open_store(loc, writable=False, **opts)  # its warnings are no one's: nothing is printed

    return Front(_environment(), Collected(on_thread), False, lambda: _location(name, store, options), opener)


def collected(operation: str, front: Any, call: Callable[[], Any]) -> RunResult:
    """The run's RunResult from the Front's kept events (or the outcome it returned); an error
    that ends the run carries it, when one was made, as ``.result``."""
    from symfonic_cli.changes.result import result_of

    report = front.report
    try:
        outcome = call()
    except SymfonicError as exc:
        if getattr(exc, "outcome", None) is not None:
            report.whole(exc.outcome.document)  # type: ignore[attr-defined]
        exc.result = result_of(operation, report.value)  # type: ignore[attr-defined]
        raise
    if outcome is not None:
        report.whole(outcome.document)
    return result_of(operation, report.value)  # type: ignore[return-value]


def _parts(operation: str) -> tuple[Any, Any, Any]:
    """An operation's declared parameters, its planning (the request made: api/front.py) and its run."""
    from symfonic_cli.api import front as fronts

    if operation == "prune":
        from symfonic_cli.prune.params import PARAMS as PRUNE

        return PRUNE, fronts.prune_request, fronts.run_prune
    if operation == "rewind":
        from symfonic_cli.rewind.params import PARAMS as REWIND

        return REWIND, _rewind_request, fronts.run_rewind
    from symfonic_cli.erase.params import PARAMS as ERASE

    return ERASE, fronts.erase_request, fronts.run_erase


def _rewind_request(front: Any, given: dict[str, Any]) -> Any:
    """rewind's ``key`` (positional) or ``thread``: one of them, as the command's KEY or --thread."""
    from symfonic_cli.api.front import rewind_request

    key, thread = given.pop("key", None), given.get("thread")
    if key is not None and thread is not None:
        raise UsageError("the thread key is given twice (as key and as thread)", hint="give one of them")
    chosen = key if key is not None else thread
    return rewind_request(front, {**given, "thread": [chosen] if chosen is not None else None})


def _done(operation: str) -> Callable[..., RunResult]:
    def run(store: Any, options: dict[str, Any], given: dict[str, Any]) -> RunResult:
        _, request_of, run_it = _parts(operation)
        front = _api_front(operation, store, options, given.get("on_thread"))
        return collected(operation, front, lambda: run_it(request_of(front, given), front.environment, front.report))

    return run


def _planned(operation: str) -> Callable[..., Any]:
    def plan(store: Any, options: dict[str, Any], given: dict[str, Any]) -> Any:
        """The plan: the request made once and planned (its dry run streamed into the kept events);
        ``execute`` runs that request."""
        from symfonic_cli.changes.result import Plan

        _, request_of, run_it = _parts(operation)
        front = _api_front(operation, store, options, given.get("on_thread"))
        request = request_of(front, {**given, "dry_run": True})
        result = collected(operation, front, lambda: run_it(request, front.environment, front.report))
        return Plan(operation, result.to_json(), request=request, runner=run_it)

    return plan


def keywords(name: str, params: tuple[Any, ...], call: Callable[..., RunResult], doc: str,
             positional: tuple[str, ...] = ("store",), optional: tuple[tuple[str, str], ...] = ()) -> Callable[..., RunResult]:
    """The API function of a changing operation, its keywords its declared parameters
    (changes/params.py) with their defaults and annotations; every argument checked (api/arguments.py)."""
    import inspect

    kind = inspect.Parameter
    signature = inspect.Signature(
        [kind(n, kind.POSITIONAL_OR_KEYWORD) for n in positional]
        + [kind(n, kind.POSITIONAL_OR_KEYWORD, default=None, annotation=a) for n, a in optional]  # given as keywords
        + [kind(p.name, kind.KEYWORD_ONLY, default=p.default, annotation=p.annotation) for p in params if p.api]
        + [kind("options", kind.VAR_KEYWORD)], return_annotation="RunResult")

    def function(*args: Any, **kwargs: Any) -> RunResult:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        given = dict(bound.arguments)
        options = given.pop("options", {})
        return call(*(given.pop(n) for n in positional), options, given)

    function.__signature__ = signature  # type: ignore[attr-defined]
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return checked(function)


_DOCS = {
    "prune": """``thread prune -f json``: the receipt (or, with ``dry_run``, the plan). ``all_threads`` is
    the command's ``--all``; ``older_than`` also keeps every checkpoint newer than that;
    ``on_thread``: called with each thread as it is done (or, in a plan, each thread's plan record).""",
    "erase": """``thread erase -f json``: the receipt (or, with ``dry_run``, the plan), as a RunResult;
    ``on_thread``: called with each thread as it is done (changes/report.ThreadDone).""",
    "rewind": """``thread rewind -f json``: a copy of an earlier root checkpoint (``to``: its id or ``"-N"``;
    or ``before_message``: the newest one without that transcript message) written as the thread's
    newest, as LangGraph's ``update_state(config, None, as_node="__copy__")`` does; the receipt (or,
    with ``dry_run``, the plan) as a RunResult. A real rewind needs ``yes=True``.""",
}
_OPTIONAL = {"rewind": (("key", "str | None"),)}

prune = keywords("prune", _parts("prune")[0], _done("prune"), _DOCS["prune"])
erase = keywords("erase", _parts("erase")[0], _done("erase"), _DOCS["erase"])
rewind = keywords("rewind", _parts("rewind")[0], _done("rewind"), _DOCS["rewind"], optional=_OPTIONAL["rewind"])


def planner(operation: str) -> Callable[..., Any]:
    """The plan function of an operation, its arguments checked as the operation's (api/plans.py)."""
    return keywords(f"plan_{operation}", _parts(operation)[0], _planned(operation), "", optional=_OPTIONAL.get(operation, ()))


@checked
def migrate(
    source,
    target,
    *,
    thread: str | list[str] | None = None,
    tenant: str | None = None,
    sub_tenant: str | None = None,
    session: str | None = None,
    from_file: str | None = None,
    all_threads: bool = False,
    dry_run: bool = False,
    verify_only: bool = False,
    init_target: bool = False,
    jobs: int | None = None,
    source_options: dict[str, Any] | None = None,
    target_options: dict[str, Any] | None = None,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    wait: bool = False,
    max_duration: str | timedelta | None = None,
    pause: str | None = None,
    max_rate: float | None = None,
) -> RunResult:
    """``migrate -f json``: ``{"source", "target", "mode", "threads": [...], "totals"}`` as a RunResult.
    A thread not copied and verified raises ``MigrateIncomplete`` (exit 7) with it as ``.result``."""
    from symfonic_cli.migrate.command import MigrateRequest, check_request

    if isinstance(thread, str):
        thread = [thread]
    if from_file == "-":
        raise UsageError("from_file '-' reads standard input; pass the keys as thread=[...]")
    check_request(str(source) if source else None, str(target) if target else None,
                  dry_run=dry_run, verify_only=verify_only, init_target=init_target)
    from symfonic_cli.limits import MAX_JOBS

    if jobs is not None and not 1 <= jobs <= MAX_JOBS:
        raise UsageError(f"jobs must be 1 to {MAX_JOBS}")
    _check_lock_timeout(lock_timeout)
    src, src_opts = _location("migrate", source, source_options or {})
    dst, dst_opts = _location("migrate", target, target_options or {})
    request = MigrateRequest(
        source=src, target=dst, source_options=src_opts, target_options=dst_opts,
        selection_options={"threads": list(thread or []), "tenant": tenant, "sub_tenant": sub_tenant,
                           "session": session, "from_file": from_file, "all_threads": all_threads},
        dry_run=dry_run, verify_only=verify_only, init_target=init_target, jobs=jobs,
        lock_timeout=float(lock_timeout), wait=_flag(wait, "wait"), max_duration=_max_duration(max_duration),
        pace=pace_of(pause, max_rate, cli=False),
    )
    planning = PLANNING.get()
    if planning is not None:
        planning.append((request, run_migration))
    return run_migration(request, _environment())


def run_migration(request: Any, env: Any) -> RunResult:
    """migrate/command.run_migrate's typed result (its document); not all copied and verified:
    ``MigrateIncomplete`` carrying it as ``.result``."""
    from symfonic_cli.migrate.command import run_migrate

    result = run_migrate(request, env)
    doc = RunResult("migrate", result.document())
    try:
        result.check()
    except SymfonicError as exc:
        exc.result = doc  # type: ignore[attr-defined]
        raise
    return doc
