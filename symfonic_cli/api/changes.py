"""The changing operations as functions: ``erase``, ``export``, ``prune``, ``rewind``, ``migrate``. Each takes the explicit
choices its command asks for and returns its result, a ``RunResult`` (changes/result.py: typed, and the mapping the
command prints with ``-f json``; ``to_json()`` gives that document). api/plans.py makes a plan of each first
(``plan_erase`` ...) and runs it (``execute``).

Their keywords are each operation's declared parameters (changes/params.py; prune/params.py, erase/params.py,
export/params.py, rewind/params.py), the command's options being built from the same declarations; each runs
the one path the command runs too (api/front.py) on a library Environment: nothing is read from or written to the
process's streams, no terminal is ever asked, and the run's events are kept as data (api/report.Collected, the
Report the drivers tell: changes/report.py), never rendered, printed or parsed. ``erase`` and ``prune`` take
``on_thread``: called with each thread as it is done (a ``ThreadDone``: its ``entry`` is the thread's record, as
``-f jsonl`` prints it after the run's head). A real erase needs ``yes=True`` (without it: ``NotConfirmedError``,
exit 6, nothing deleted), as the command without a terminal; so do a real prune and a real rewind. A run that ends
in an error raises it (a ``SymfonicError`` with the command's exit code) with the record, when one was made, as
``.result``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from symfonic_cli.api.arguments import checked
from symfonic_cli.changes.result import RunResult  # at run time: annotations are read (api/arguments.py)
from symfonic_cli.errors import SymfonicError, UsageError


def _environment() -> Any:
    from symfonic_cli.environment import Environment

    return Environment.library()


def _api_front(name: str, options: dict[str, Any], on_thread: Callable[[Any], None] | None = None) -> Any:
    """The Python API's Front (api/front.py): a library Environment, the events kept as data (a
    store's open warnings are no one's: nothing is printed), the store's options as open_store's,
    errors naming the keywords and, about the store argument, the function ``name``."""
    from symfonic_cli.api.front import Front
    from symfonic_cli.api.report import Collected

    return Front(_environment(), Collected(on_thread), False, options, name)


def collected(operation: str, front: Any, call: Callable[[], Any]) -> RunResult:
    """The run's RunResult from the Front's kept events (its end told by the driver); an error
    that ends the run carries it, when one was made, as ``.result``."""
    from symfonic_cli.changes.result import result_of

    try:
        call()
    except SymfonicError as exc:
        exc.result = result_of(operation, front.report.value)  # type: ignore[attr-defined]
        raise
    return result_of(operation, front.report.value)  # type: ignore[return-value]


def _parts(operation: str) -> tuple[Any, Any, Any, Any]:
    """An operation's declared parameters, its request (api/front.py: the threads chosen, the
    values checked), its run and its planning (a run of the request with ``dry_run``, or export's plan)."""
    from symfonic_cli.api import front as fronts

    if operation == "prune":
        from symfonic_cli.prune.params import PARAMS as PRUNE

        return PRUNE, fronts.prune_request, fronts.run_prune, fronts.run_prune
    if operation == "rewind":
        from symfonic_cli.rewind.params import PARAMS as REWIND

        return REWIND, _rewind_request, fronts.run_rewind, fronts.run_rewind
    if operation == "export":
        from symfonic_cli.export.params import PARAMS as EXPORT

        return EXPORT, fronts.export_request, _run_export, fronts.plan_export
    if operation == "migrate":
        from symfonic_cli.migrate.params import PARAMS as MIGRATE

        return MIGRATE, fronts.migrate_request, fronts.run_migrate, fronts.run_migrate
    from symfonic_cli.erase.params import PARAMS as ERASE

    return ERASE, fronts.erase_request, fronts.run_erase, fronts.run_erase


def _run_export(request: Any, environment: Any, report: Any) -> None:
    """export's run, its result told as the end: its driver returns it (the command line renders the bundle's record)."""
    from symfonic_cli.api.front import run_export

    report.ended(run_export(request, environment, report))


def _rewind_request(front: Any, store: Any, given: dict[str, Any]) -> Any:
    """rewind's ``key`` (positional) or ``thread``: one of them, as the command's KEY or --thread."""
    from symfonic_cli.api.front import rewind_request

    key, thread = given.pop("key", None), given.get("thread")
    if key is not None and thread is not None:
        raise UsageError("the thread key is given twice (as key and as thread)", hint="give one of them")
    chosen = key if key is not None else thread
    return rewind_request(front, store, {**given, "thread": [chosen] if chosen is not None else None})


def _run(operation: str, store: Any, options: dict[str, Any], given: dict[str, Any]) -> RunResult:
    """An operation's run on ``store`` as given: the API's Front (the store found when the request
    is made, then opened once for the operation's driver: api/front.py), the request, the run."""
    _, request_of, run_it, _ = _parts(operation)
    front = _api_front(operation, options, given.get("on_thread"))
    return collected(operation, front, lambda: run_it(request_of(front, store, given), front.environment, front.report))


def _planned(operation: str) -> Callable[..., Any]:
    def plan(store: Any, options: dict[str, Any], given: dict[str, Any]) -> Any:
        """The plan: the request made once and planned (erase, prune, rewind: their dry run, streamed
        into the kept events; export: its plan); ``execute`` runs that request."""
        from symfonic_cli.changes.result import Plan

        _, request_of, run_it, plan_it = _parts(operation)
        front = _api_front(operation, options, given.get("on_thread"))
        request = request_of(front, store, {**given, "dry_run": True} if operation != "export" else given)
        result = collected(operation, front, lambda: plan_it(request, front.environment, front.report))
        return Plan(operation, result.to_json(), request=request, runner=run_it)

    return plan


def keywords(name: str, params: tuple[Any, ...], call: Callable[..., Any], doc: str,
             positional: tuple[str, ...] = ("store",), optional: tuple[tuple[str, str], ...] = (),
             var_options: bool = True) -> Callable[..., Any]:
    """The API function of a changing operation: ``positional`` first (the store, an export's output),
    then its declared parameters (changes/params.py) as keywords with their defaults and annotations,
    then the store's options; every argument checked (api/arguments.py) before ``call(store,
    options, given)`` runs."""
    import inspect

    kind = inspect.Parameter
    paths = {p.name: "str" for p in params if p.kind == "path"}  # a path given first (export's output): a str, or a path object
    signature = inspect.Signature(
        [kind(n, kind.POSITIONAL_OR_KEYWORD, annotation=paths.get(n, kind.empty)) for n in positional]
        + [kind(n, kind.POSITIONAL_OR_KEYWORD, default=None, annotation=a) for n, a in optional]
        + [kind(p.name, kind.KEYWORD_ONLY, default=p.default, annotation=p.annotation) for p in params
           if p.api and p.name not in positional]
        + ([kind("options", kind.VAR_KEYWORD)] if var_options else []), return_annotation="RunResult")

    def function(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        given = dict(bound.arguments)
        options = given.pop("options", {})
        return call(given.pop(positional[0]), options, given)

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
_POSITIONAL = {"export": ("store", "output")}
_DOCS["export"] = """``thread export -f json``: the bundle at ``output`` (a directory, .zip or .tar.gz) and its record."""


def _function(operation: str, name: str, call: Callable[..., Any]) -> Callable[..., Any]:
    return keywords(name, _parts(operation)[0], call, _DOCS[operation] if name == operation else "",
                    positional=_POSITIONAL.get(operation, ("store",)), optional=_OPTIONAL.get(operation, ()))


def _declared(operation: str) -> Callable[[Callable[..., RunResult]], Callable[..., Any]]:
    """The API function of ``operation``: its declared keywords (``keywords``) over the run."""
    return lambda run: _function(operation, operation, run)


@_declared("erase")
def erase(store: Any, options: dict[str, Any], given: dict[str, Any]) -> RunResult:
    return _run("erase", store, options, given)


@_declared("export")
def export(store: Any, options: dict[str, Any], given: dict[str, Any]) -> RunResult:
    return _run("export", store, options, given)


@_declared("prune")
def prune(store: Any, options: dict[str, Any], given: dict[str, Any]) -> RunResult:
    return _run("prune", store, options, given)


@_declared("rewind")
def rewind(store: Any, options: dict[str, Any], given: dict[str, Any]) -> RunResult:
    return _run("rewind", store, options, given)


def planner(operation: str) -> Callable[..., Any]:
    """The plan function of an operation, its arguments checked as the operation's (api/plans.py)."""
    if operation == "migrate":
        return keywords("plan_migrate", _parts("migrate")[0], lambda s, o, g: _migrate(s, o, g, plan=True), "",
                        positional=("source", "target"), var_options=False)
    return _function(operation, f"plan_{operation}", _planned(operation))


def _migrate(source: Any, options: dict[str, Any], given: dict[str, Any], plan: bool = False) -> Any:
    """migrate's run (or, with ``plan``, its plan): the request made once (api/front.py); the
    stores' options are ``source_options`` and ``target_options``."""
    from symfonic_cli.api.front import Front, migrate_request
    from symfonic_cli.changes.result import Plan

    given = {**given, "source": source, **({"dry_run": True} if plan else {})}
    front = Front(_environment(), None, False, {}, "migrate")  # each store's options: source_options, target_options
    request = migrate_request(front, given)
    result = run_migration(request, front.environment)
    return Plan("migrate", result.to_json(), request=request, runner=run_migration) if plan else result


migrate = keywords("migrate", _parts("migrate")[0], _migrate, """``migrate -f json``: ``{"source", "target", "mode", "threads": [...], "totals"}`` as a RunResult.
    A thread not copied and verified raises ``MigrateIncomplete`` (exit 7) with it as ``.result``.""",
                   positional=("source", "target"), var_options=False)


def run_migration(request: Any, env: Any) -> RunResult:
    """migrate/command.migrate_stores' typed result (its document); not all copied and verified:
    ``MigrateIncomplete`` carrying it as ``.result``."""
    from symfonic_cli.api.front import run_migrate

    result = run_migrate(request, env, None)
    doc = RunResult("migrate", result.document())
    try:
        result.check()
    except SymfonicError as exc:
        exc.result = doc  # type: ignore[attr-defined]
        raise
    return doc
