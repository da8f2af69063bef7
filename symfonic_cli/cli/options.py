"""The typer option types shared by the command groups (``--store`` and ``--format`` built from
``optionspec.py``, as the quick route's are), and the one selection erase, export and prune share."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any, List, Optional

import typer

from symfonic_cli.cli import optionspec
from symfonic_cli.cli.common import MAX_BATCH, MAX_COUNT, MAX_JOBS
from symfonic_cli.environment import Environment
from symfonic_cli.errors import UsageError
from symfonic_cli.limits import DEFAULT_LOCK_TIMEOUT, DEFAULT_PIECE, MAX_PIECE, MAX_RATE

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.changes.steps import Pace
    from symfonic_cli.selection import Selection

_TYPES = {"text": Optional[str], "count": Optional[int], "multi": Optional[List[str]], "flag": bool}


def option_info(spec: dict[str, Any]) -> Any:
    """The ``typer.Option`` of one entry of ``optionspec`` (the quick route parses the same entry)."""
    extra: dict[str, Any] = {}
    if spec.get("kind", "text") == "count":
        extra.update(min=0, max=MAX_COUNT)
    if "env" in spec:
        extra.update(envvar=spec["env"], show_envvar=True)
    return typer.Option(*spec["opts"], help=spec["help"], **extra)


def typer_option(spec: dict[str, Any]) -> Any:
    """The typer option type (``Annotated[type, typer.Option]``) of one entry of ``optionspec``."""
    return Annotated[_TYPES[spec.get("kind", "text")], option_info(spec)]


def typer_options(specs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Parameter name -> ``typer.Option``, for a command's table in ``optionspec``: a command writes
    ``Annotated[<type of the entry's kind>, OPTIONS[name]]``, so that the type checker sees the type."""
    return {name: option_info(spec) for name, spec in specs.items()}


StoreOpt = typer_option(optionspec.STORE)
# A list, so that a repeated --thread is seen: a command of one thread refuses it (the last one
# silently winning would read or change another thread than the operator named first).
ThreadOpt = Annotated[Optional[list[str]], typer.Option("--thread", "-t", help="Thread key tenant:sub:session.")]
ThreadsOpt = Annotated[Optional[list[str]], typer.Option("--thread", "-t", help="Thread key tenant:sub:session (repeat for several).")]
# The key as a command's first argument too (``gh issue view 123``, ``kubectl describe pod X``):
# every command of one thread takes it, and ``with_key`` joins it to --thread once for all of them.
KeyArg = Annotated[
    Optional[str],
    typer.Argument(metavar="[KEY]", show_default=False),  # its help: cli/helptext.py
]
TenantOpt = Annotated[Optional[str], typer.Option("--tenant", help="Tenant id (derives the key with --session).")]
SubTenantOpt = Annotated[Optional[str], typer.Option("--sub-tenant", help="Sub-tenant id ('_' in the key when absent).")]
SessionOpt = Annotated[Optional[str], typer.Option("--session", help="Session id (derives the key with --tenant).")]
FormatOpt = typer_option(optionspec.FORMAT)
RecordFormatOpt = typer_option(optionspec.RECORD_FORMAT)  # the record commands: csv too
BatchSizeOpt = Annotated[
    Optional[int],
    typer.Option(
        "--batch-size",
        min=1,
        max=MAX_BATCH,
        help=f"A retention sweep (--inactive-for/--inactive-since) reads, plans and handles N threads at a time (1 to {MAX_BATCH}; default 500).",
    ),
]


def _lock_timeout_seconds(value: object) -> float:
    """--lock-timeout: a duration as every other takes one (500ms, 5s, 2m) or bare seconds (5, 0.5)."""
    from symfonic_cli.clock import parse_pause
    from symfonic_cli.limits import lock_timeout_in_range, lock_timeout_range

    if isinstance(value, (int, float)):  # the default
        seconds = float(value)
    else:
        text = str(value).strip()
        try:
            seconds = float(text)  # bare seconds, as before units were taken
        except ValueError:
            try:
                seconds = parse_pause(text, option="--lock-timeout").total_seconds()
            except UsageError as exc:
                what = "is out of range" if "out of range" in exc.message else "is not a duration"
                raise typer.BadParameter(f"'{value}' {what} (500ms, 5s, 2m; a bare number is seconds; 10ms to 1h).") from None
    if not lock_timeout_in_range(seconds):  # nan and inf too
        raise typer.BadParameter(f"'{value}' is out of range (10ms to 1h; {lock_timeout_range()} seconds).")
    return seconds


LockTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--lock-timeout",
        parser=_lock_timeout_seconds,
        metavar="DURATION",
        help=f"How long one statement waits for a lock held by the application (500ms, 5s, 2m; a bare number is "
             f"seconds; 10ms to 1h; default {DEFAULT_LOCK_TIMEOUT:g}s); a thread whose locks are not had in time is "
             "left as it was and reported busy (exit 9), a rerun takes it.",
    ),
]
MaxDurationOpt = Annotated[
    Optional[str],
    typer.Option("--max-duration", help="Stop cleanly between two threads once this long has passed since the first began (30m, 2h); "
                                        "exit 11, the receipt says what is left, the same command continues."),
]


def max_duration_of(text: str | None) -> timedelta | None:
    """--max-duration as a timedelta (more than 0s), else exit 2 naming it."""
    from symfonic_cli.clock import parse_duration, positive_duration  # here: TAB and --help load this module

    return None if text is None else positive_duration(parse_duration(text, option="--max-duration"), "--max-duration")


PauseOpt = Annotated[
    Optional[str],
    typer.Option("--pause", help="Wait this long after each thread's transaction (200ms, 2s; up to 1h): room for replicas and the application."),
]
MaxRateOpt = Annotated[
    Optional[float],
    typer.Option("--max-rate", help=f"At most N threads a second (more than 0, up to {MAX_RATE:,.0f})."),
]


MaxReplicaLagOpt = Annotated[
    Optional[str],
    typer.Option("--max-replica-lag", help="PostgreSQL, MongoDB: before each transaction, wait while a standby replays more than this "
                                           "far behind the primary (10s, 500ms; up to 1h), saying so; --max-duration still ends the run."),
]


def pace_of(pause: str | None, max_rate: float | None, max_replica_lag: str | None = None) -> Pace | None:
    """--pause, --max-rate and --max-replica-lag as the run's Pace (None: full speed), else exit 2 naming the option."""
    from symfonic_cli.changes.steps import pace_of as library_pace

    return library_pace(pause, max_rate, cli=True, max_replica_lag=max_replica_lag)


JobsOpt = Annotated[
    int,
    typer.Option("--jobs", "-j", min=1, max=MAX_JOBS,
                 help=f"PostgreSQL, MongoDB: N sessions take the threads, each thread still one transaction, under the one run lock "
                      f"(1 to {MAX_JOBS}; default 1)."),
]
PieceSizeOpt = Annotated[
    int,
    typer.Option("--piece-size", min=1, max=MAX_PIECE,
                 help=f"A thread whose prune deletes more than N checkpoints is pruned in several transactions of at most N, "
                      f"oldest first, each verified and committed (1 to {MAX_PIECE:,}; default {DEFAULT_PIECE})."),
]
WaitOpt = Annotated[
    bool,
    typer.Option("--wait", help="Another erase or prune runs on the same store: wait for it to finish (default: exit 10, naming it)."),
]
EraseWaitOpt = Annotated[
    bool,
    typer.Option("--wait", help="Another erase or prune runs on the same store: wait for it to finish (default: exit 10, naming it). "
                                "SQLite: at the end, also wait for readers that keep the -wal from being truncated (default: exit 12)."),
]
# The selections thread erase and thread export share (selection.py, ERASE rules).
AllSessionsOpt = Annotated[bool, typer.Option("--all-sessions", help="Every thread of --tenant (or of --tenant --sub-tenant).")]
KeyFileOpt = Annotated[
    Optional[str],
    typer.Option("--from-file", help="A batch: one exact thread key per line, or threads list -f json/jsonl output ('-' for stdin)."),
]
MissingOkOpt = Annotated[
    bool, typer.Option("--missing-ok", help="A requested key that names no thread (or a selection that matches none) exits 0, not 3.")
]
InactiveForOpt = Annotated[
    Optional[str],
    typer.Option("--inactive-for", help="A retention sweep: every thread (of --tenant [--sub-tenant]) whose last activity is older than this (90d, 12h, 2w)."),
]
InactiveSinceOpt = Annotated[
    Optional[str],
    typer.Option("--inactive-since", help="A retention sweep: every thread with no activity since this ISO 8601 date or time."),
]


def with_key(key: str | None, thread: list[str] | None) -> list[str] | None:
    """The --thread list with the KEY argument in it: the key is given once, as the argument or as
    --thread, never both (exit 2). The key is kept exactly as typed."""
    if key is None:
        return thread
    if thread:
        from symfonic_cli.errors import UsageError

        raise UsageError("the thread key is given twice (as KEY and as --thread)", hint="give one of them")
    return [key]


def erase_selection(
    environment: Environment, *, store: str | None = None, command: str = "erase", missing_ok: bool = False,
    listed_only: bool = False, **given: Any,
) -> Selection:
    """The threads thread erase, export or prune (``command``) works on: selection.choose, with the
    store read-only (``--store``) for a session across sub-tenants or tenants."""
    from symfonic_cli.cli.common import open_for_reading
    from symfonic_cli.selection import choose

    return choose(command, opener=lambda: open_for_reading(store, environment=environment), environment=environment,
                  missing_ok=missing_ok, listed_only=listed_only, **given)


def changing(run: Any, given: dict[str, Any], *, report: Any = None, render: Any = None) -> None:
    """A changing command's run through the API (api/front.py): this command line's Front (its
    Environment, --store and config, the typed confirmation on this terminal: ``report``, by
    default cli/report.py's TextReport), then how it ended rendered (``render(call, format, env)``,
    by default cli/report.rendered)."""
    from symfonic_cli.api.front import Front, named_store
    from symfonic_cli.cli.common import check_format, environment, open_for_reading, store_options
    from symfonic_cli.cli.report import TextReport, rendered
    from symfonic_cli.location import resolve_store

    env = environment()
    store, fmt = given.pop("store", None), given.pop("fmt")
    out_format = check_format(fmt)

    def place(role: str = "store") -> tuple[Any, dict[str, Any]]:
        if role != "store":  # migrate's --from and --to: errors name the option
            location = named_store("--from" if role == "source" else "--to", resolve_store, given[role])
            return location, store_options(location, env)
        location = resolve_store(store)
        return location, {k: v for k, v in store_options(location, env).items() if k != "erase_extra"}

    front = Front(env, (report or TextReport)(env, out_format), True, place, lambda: open_for_reading(store, environment=env))
    (render or rendered)(lambda: run(front, given), out_format, env)
