"""The parameters of the changing runs, declared once: each ``Param`` is a command option (its
spellings, help, default, range) and a Python API keyword (its annotation, checked by
api/arguments.py). cli/declared.py builds the typer options from these, api/changes.py the
keyword functions; each operation's package lists its own (prune/params.py, erase/params.py, ...)
with the shared ones below (the selection, the receipt, the lock and the pace).

A value is checked and made what the run takes by ``Param.value``, with the option's spelling on
the command line (``--older-than``) and the keyword's in the API (``older_than``), so an error
names what the caller typed. ``Request`` holds a run's declared values by name.

Free of typer and typing at import: ``--help`` and TAB load it.
"""

from __future__ import annotations

from symfonic_cli.limits import DEFAULT_LOCK_TIMEOUT, MAX_BATCH, MAX_JOBS, MAX_RATE

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from symfonic_cli.changes.steps import Pace

# The API annotation of each kind (with " | None" when the default is None); the command line's
# type is click's (cli/declared.py).
_ANNOTATIONS = {"flag": "bool", "int": "int", "float": "float", "text": "str", "keys": "str | list[str]",
                "duration": "str | timedelta", "path": "str", "key": "str", "callback": "Callable[[Any], None]",
                "options": "dict[str, Any]"}


class Param:
    """One parameter of a changing run. ``kind``: flag, int, float, text, keys (thread keys), key (one:
    the command line takes --thread as a list, refusing a second),
    duration (a text or a timedelta), path. ``flags``: the option's spellings (none: the API's
    alone); ``cli``: False for a keyword the command line spells otherwise. ``convert(value,
    spelled)``: the checked value the run takes (a UsageError naming ``spelled`` else);
    ``parser``: the command line parses the text with it (a ValueError's text is the message).
    ``api``: False for an option the API takes otherwise (``--format``: a RunResult is data)."""

    __slots__ = ("name", "kind", "default", "help", "flags", "low", "high", "convert", "parser", "metavar", "cli", "api",
                 "cli_range")

    def __init__(self, name: str, kind: str, default: Any = None, help: str = "", flags: tuple[str, ...] = (), *,
                 low: int | None = None, high: int | None = None, convert: Callable[[Any, str], Any] | None = None,
                 parser: Callable[[Any], Any] | None = None, metavar: str | None = None, cli: bool = True,
                 api: bool = True, cli_range: bool = True) -> None:
        self.name, self.kind, self.default, self.help, self.flags = name, kind, default, help, flags
        self.low, self.high, self.convert, self.parser, self.metavar = low, high, convert, parser, metavar
        self.cli, self.api, self.cli_range = cli and bool(flags), api, cli_range

    @property
    def annotation(self) -> str:
        """The API's annotation text (api/arguments.py checks a value against it)."""
        text = _ANNOTATIONS[self.kind]
        return text + " | None" if self.default is None else text

    def spelled(self, cli: bool) -> str:
        return self.flags[0] if cli and self.flags else self.name

    def value(self, given: Any, cli: bool) -> Any:
        """What the run takes for ``given`` (the option's value, or the keyword's)."""
        if self.low is not None and self.high is not None and type(given) is int and not cli \
                and not self.low <= given <= self.high:
            from symfonic_cli.errors import UsageError

            raise UsageError(f"{self.name} must be a whole number from {self.low:,} to {self.high:,}")
        return given if self.convert is None or given is None else self.convert(given, self.spelled(cli))


def declared(params: Iterable[Param], given: dict[str, Any], *, cli: bool) -> dict[str, Any]:
    """Every declared value, checked and converted (a missing one: its default)."""
    return {p.name: p.value(given.get(p.name, p.default), cli) for p in params}


class Request:
    """A run's request: ``location``, ``options`` (the store's), the run's selection, and each of
    its operation's declared values by name (``PARAMS``), its default when not given."""

    PARAMS: tuple[Param, ...] = ()
    FIXED: tuple[str, ...] = ("location", "options", "selection")  # given by the front end, not declared
    EXTRA: dict[str, Any] = {}  # what the run adds to the declared values (pace, ...), with defaults

    def __init__(self, **values: Any) -> None:
        names = {p.name for p in self.PARAMS}
        unknown = set(values) - names - set(self.FIXED) - set(self.EXTRA)
        if unknown:
            raise TypeError(f"{type(self).__name__}: unknown {', '.join(sorted(unknown))}")
        for name in self.FIXED:
            if name not in values:
                raise TypeError(f"{type(self).__name__}: {name} is required")
        converted = {p.name: p.value(p.default, False) for p in self.PARAMS if p.name not in values}  # "15m": a timedelta
        converted.update(self.EXTRA)
        converted.update(values)
        self.__dict__.update(converted)

    def replace(self, **changes: Any) -> Request:
        new = type(self).__new__(type(self))
        new.__dict__.update({**self.__dict__, **changes})
        return new

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.__dict__.items() if k != 'options')})"

    if TYPE_CHECKING:
        def __getattr__(self, name: str) -> Any: ...


# -- the checks the declarations share


def named(value: str, spelled: str) -> str:
    """--operator, --ticket: given, not empty (an operator of blanks names no one)."""
    if not value or (spelled.endswith("operator") and not value.strip()):
        from symfonic_cli.errors import UsageError

        raise UsageError(f"{spelled} is empty")
    return value


def duration(value: Any, spelled: str) -> Any:
    """A period (90d, 12h, 2w), a unit required; or a timedelta (the API)."""
    from datetime import timedelta

    if isinstance(value, timedelta):
        return value
    from symfonic_cli.clock import parse_duration

    return parse_duration(value, option=spelled)


def minutes(value: Any, spelled: str) -> Any:
    """A duration whose bare number is minutes (--grace)."""
    from datetime import timedelta

    if isinstance(value, timedelta):
        return value
    from symfonic_cli.clock import parse_duration

    return parse_duration(value, option=spelled, bare_unit="m")


def time_limit(value: Any, spelled: str) -> Any:
    """--max-duration: more than 0s."""
    from symfonic_cli.clock import positive_duration

    return positive_duration(duration(value, spelled), spelled)


def lock_seconds(value: Any, spelled: str) -> float:
    """--lock-timeout as seconds, in its range (the command line's parser has read the text)."""
    from symfonic_cli.limits import lock_timeout_in_range, lock_timeout_range

    if type(value) not in (int, float) or not lock_timeout_in_range(float(value)):
        from symfonic_cli.errors import UsageError

        raise UsageError(f"{spelled} must be a number of seconds, {lock_timeout_range()}")
    return float(value)


def parse_lock_timeout(value: object) -> float:
    """--lock-timeout's text: a duration as every other takes one (500ms, 5s, 2m) or bare seconds (5, 0.5)."""
    from symfonic_cli.clock import parse_pause
    from symfonic_cli.errors import UsageError
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
                raise ValueError(f"'{value}' {what} (500ms, 5s, 2m; a bare number is seconds; 10ms to 1h).") from None
    if not lock_timeout_in_range(seconds):  # nan and inf too
        raise ValueError(f"'{value}' is out of range (10ms to 1h; {lock_timeout_range()} seconds).")
    return seconds


def pace(values: dict[str, Any], *, cli: bool) -> Pace | None:
    """--pause, --max-rate and --max-replica-lag as the run's Pace (None: full speed)."""
    from symfonic_cli.changes.steps import pace_of

    return pace_of(values.get("pause"), values.get("max_rate"), cli=cli, max_replica_lag=values.get("max_replica_lag"))


# -- the parameters the changing runs share

THREADS = Param("thread", "keys", None, "Thread key tenant:sub:session (repeat for several).", ("--thread", "-t"))
TENANT = Param("tenant", "text", None, "Tenant id (derives the key with --session).", ("--tenant",))
SUB_TENANT = Param("sub_tenant", "text", None, "Sub-tenant id ('_' in the key when absent).", ("--sub-tenant",))
SESSION = Param("session", "text", None, "Session id (derives the key with --tenant).", ("--session",))
ALL_SESSIONS = Param("all_sessions", "flag", False, "Every thread of --tenant (or of --tenant --sub-tenant).", ("--all-sessions",))
FROM_FILE = Param("from_file", "path", None,
                  "A batch: one exact thread key per line, or threads list -f json/jsonl output ('-' for stdin).", ("--from-file",))
MISSING_OK = Param("missing_ok", "flag", False,
                   "A requested key that names no thread (or a selection that matches none) exits 0, not 3.", ("--missing-ok",))
INACTIVE_FOR = Param("inactive_for", "text", None, "A retention sweep: every thread (of --tenant [--sub-tenant]) whose last "
                                                   "activity is older than this (90d, 12h, 2w).", ("--inactive-for",))
INACTIVE_SINCE = Param("inactive_since", "text", None,
                       "A retention sweep: every thread with no activity since this ISO 8601 date or time.", ("--inactive-since",))
BATCH_SIZE = Param("batch_size", "int", None, f"A retention sweep (--inactive-for/--inactive-since) reads, plans and handles N "
                                              f"threads at a time (1 to {MAX_BATCH}; default 500).", ("--batch-size",),
                   low=1, high=MAX_BATCH)
RECEIPT = Param("receipt", "path", None, "Also append the receipt to this JSONL audit file (0600, a line per thread, fsync'd).",
                ("--receipt",))
TICKET = Param("ticket", "text", None, "The request or ticket id, for the receipt.", ("--ticket",), convert=named)


def operator(verb: str) -> Param:
    return Param("operator", "text", None, f"Who {verb}, for the receipt (default: the login name, else uid:N).", ("--operator",),
                 convert=named)


def yes(verb: str) -> Param:
    return Param("yes", "flag", False, f"{verb} without a typed confirmation (required without a terminal).", ("--yes", "-y"))


LOCK_TIMEOUT = Param(
    "lock_timeout", "float", DEFAULT_LOCK_TIMEOUT,
    f"How long one statement waits for a lock held by the application (500ms, 5s, 2m; a bare number is seconds; 10ms to 1h; "
    f"default {DEFAULT_LOCK_TIMEOUT:g}s); a thread whose locks are not had in time is left as it was and reported busy (exit 9), "
    "a rerun takes it.", ("--lock-timeout",), convert=lock_seconds, parser=parse_lock_timeout, metavar="DURATION")
WAIT = Param("wait", "flag", False,
             "Another erase or prune runs on the same store: wait for it to finish (default: exit 10, naming it).", ("--wait",))
MAX_DURATION = Param("max_duration", "duration", None, "Stop cleanly between two threads once this long has passed since the first "
                                                       "began (30m, 2h); exit 11, the receipt says what is left, the same command continues.",
                     ("--max-duration",), convert=time_limit)
PAUSE = Param("pause", "text", None, "Wait this long after each thread's transaction (200ms, 2s; up to 1h): room for replicas and the "
                                     "application.", ("--pause",))
MAX_RATE_PARAM = Param("max_rate", "float", None, f"At most N threads a second (more than 0, up to {MAX_RATE:,.0f}).", ("--max-rate",))
MAX_REPLICA_LAG = Param("max_replica_lag", "text", None, "PostgreSQL, MongoDB: before each transaction, wait while a standby replays "
                                                         "more than this far behind the primary (10s, 500ms; up to 1h), saying so; "
                                                         "--max-duration still ends the run.", ("--max-replica-lag",))
JOBS = Param("jobs", "int", 1, f"PostgreSQL, MongoDB: N sessions take the threads, each thread still one transaction, under the one "
                               f"run lock (1 to {MAX_JOBS}; default 1).", ("--jobs", "-j"), low=1, high=MAX_JOBS)
# What the API's on_thread is: a caller's function (no option: the command line prints each thread).
ON_THREAD = Param("on_thread", "callback", None)
