"""What ``threads list`` and ``store info`` do once their options are parsed.

Free of typer: both the typer commands and the quick route (``fast.py``) call these.
"""

from __future__ import annotations

from symfonic_cli.cli.common import check_format, environment as run_environment, open_for_reading
from symfonic_cli.errors import StoreError, UsageError
from symfonic_cli.clock import iso_utc
from symfonic_cli.threadkey import parse_key
from symfonic_cli.vocabulary import DEFAULT_SORT, SORTS, STATUSES, listed

from symfonic_cli.cli.columns import THREAD_COLUMNS, _headers, _shown_columns, _with_first, default_columns, parse_columns

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.stores.protocol import Store
    from symfonic_cli.environment import Environment
    from typing import Optional


def threads_list(
    store: Optional[str],
    tenant: Optional[str],
    sub_tenant: Optional[str],
    limit: Optional[int],
    fmt: Optional[str],
    *,
    status: Optional[list[str]] = None,
    session: Optional[str] = None,
    sort: Optional[str] = None,
    reverse: bool = False,
    with_size: bool = False,
    inactive_for: Optional[str] = None,
    inactive_since: Optional[str] = None,
    active_within: Optional[str] = None,
    since: Optional[str] = None,
    until: Optional[str] = None,
    columns: Optional[str] = None,
    wide: bool = False,
    environment: Environment | None = None,
) -> None:
    """``threads list`` with every option parsed (the typer command and the quick route)."""
    environment = environment or run_environment()
    chosen = parse_columns(columns)
    if wide and chosen is not None:
        raise UsageError("--wide shows every column; leave out --columns (or name them all there)")
    # The status of the default columns is told where the store can tell it (an encrypted store
    # without its key still lists); asked for (--status, --columns status) it must be.
    implied = chosen is None and not status
    if chosen is None:
        chosen = default_columns(check_format(fmt, env=environment), wide=wide, with_size=with_size)
    if chosen is not None and "status" in chosen and not status:
        status = [",".join(STATUSES)]  # every status: the column is computed for all threads
    if chosen is not None and "size_bytes" in chosen:
        with_size = True
    window = _window(inactive_for, inactive_since, active_within, since, until, tz=environment.zone())
    if status is None and session is None and sort is None and not reverse and not with_size:
        list_threads(store, tenant, sub_tenant, limit, fmt, environment=environment, window=window, columns=chosen)
        return
    list_run_states(
        store, tenant, sub_tenant, limit, fmt, status=status, session=session, sort=sort, reverse=reverse, with_size=with_size,
        window=window, environment=environment, columns=chosen, implied=implied,
    )


def _window(inactive_for, inactive_since, active_within, since=None, until=None, *, tz=None):
    if all(v is None for v in (inactive_for, inactive_since, active_within, since, until)):
        return None
    from symfonic_cli.retention.window import window as activity_window

    return activity_window(inactive_for=inactive_for, inactive_since=inactive_since, active_within=active_within,
                           since=since, until=until, tz=tz)


def thread_records(
    st, tenant, sub_tenant, limit, *, status=None, session=None, sort=None, reverse=False, with_size=False,
    inactive_for=None, inactive_since=None, active_within=None, since=None, until=None, tz=None,
):
    """(columns, records) of ``threads list`` on an open store: what ``-f json`` prints (the Python API)."""
    window = _window(inactive_for, inactive_since, active_within, since, until, tz=tz)
    if status is None and session is None and sort is None and not reverse and not with_size:
        _check_tenant(tenant, sub_tenant)
        return THREAD_COLUMNS, list(_plain_records(st, tenant, sub_tenant, limit, window))
    checked = _check_run_state_options(tenant, sub_tenant, status, sort, session)
    return _run_state_records(st, tenant, sub_tenant, limit, *checked, session=session, reverse=reverse, with_size=with_size, window=window)


def _check_tenant(tenant: str | None, sub_tenant: str | None) -> None:
    if sub_tenant is not None and tenant is None:
        raise UsageError("--sub-tenant needs --tenant")


def list_threads(
    store: Optional[str],
    tenant: Optional[str],
    sub_tenant: Optional[str],
    limit: Optional[int],
    fmt: Optional[str],
    environment: Environment | None = None,
    window=None,
    columns=None,
) -> None:
    """``window``: an ActivityWindow (retention/window.py), compared in the database; ``columns``:
    the names --columns chose (parse_columns), None for the format's own."""
    _check_tenant(tenant, sub_tenant)
    environment = environment or run_environment()
    out_format = check_format(fmt, env=environment)
    from symfonic_cli import render

    undatable = [0]
    with open_for_reading(store, environment=environment) as st:
        records = _plain_records(st, tenant, sub_tenant, limit, window, undatable)
        shown = _shown_columns(columns, out_format, THREAD_COLUMNS)
        if shown != THREAD_COLUMNS:
            records = _with_first(st, records, shown, out_format)
        n = render.write_records(records, fmt=out_format, columns=shown, headers=_headers(shown, out_format),
                                 title=st.location.display, environment=environment)
        _warn_undatable(undatable[0], environment)
        if not n and limit != 0:
            _say_empty(st, environment, tenant=tenant, sub_tenant=sub_tenant, window=window)


def _plain_records(st, tenant, sub_tenant, limit, window, undatable=None):
    """The listing's records, streamed; ``undatable[0]`` counts the threads whose activity has no time."""
    bounds = {"last_before": window.last_before, "last_from": window.last_from} if window is not None else {}
    for t in st.list_threads(tenant=tenant, sub_tenant=sub_tenant, limit=limit, **bounds):
        if undatable is not None:
            undatable[0] += t.undatable
        yield _thread_record(t)


def _warn_undatable(n: int, environment: Environment) -> None:
    """Threads whose activity cannot be told are listed (never hidden, never swept), and said so."""
    if not n:
        return
    environment.stderr.write(f"symfonic: warning: {n} thread(s) hold a checkpoint whose id carries no time and that has no ts: "
                             "their activity is undatable (listed; a retention sweep never selects them)\n")


def _thread_record(t) -> dict:
    # Runs once per thread: plain calls, no properties (a listing may hold many thousands).
    parts = parse_key(t.key)
    first, last = t.first_at, t.last_at  # by instant (stores/activity.py, threadstate/listing.py)
    return {
        "key": t.key,
        "tenant": parts.tenant if parts else None,
        "sub_tenant": parts.sub_tenant if parts else None,
        "session": parts.session if parts else None,
        "checkpoints": t.checkpoints,
        "first_activity": iso_utc(first),
        "last_activity": iso_utc(last),
    }


def list_run_states(
    store, tenant: str | None, sub_tenant: str | None, limit: int | None, fmt, *, status, session: str | None, sort, reverse, with_size, window=None, environment: Environment | None = None,
    columns=None, implied: bool = False,
) -> None:
    """``threads list`` with --status/--session/--sort/--reverse/--with-size; ``implied``: the
    status is the default columns', not asked for (a store that cannot tell it lists without it)."""
    checked = _check_run_state_options(tenant, sub_tenant, status, sort, session)
    environment = environment or run_environment()
    out_format = check_format(fmt, env=environment)
    from symfonic_cli import render

    with open_for_reading(store, environment=environment) as st:
        try:
            every, records, undatable = _run_state_records(
                st, tenant, sub_tenant, limit, *checked, session=session, reverse=reverse, with_size=with_size, window=window,
                counted=True,
            )
        except StoreError as exc:
            if not implied:
                raise
            from symfonic_cli.render import escape_inline

            environment.stderr.write(f"symfonic: warning: status not shown: {escape_inline(exc.line())}\n")
            undatable_count = [0]
            every, records = THREAD_COLUMNS, list(_plain_records(st, tenant, sub_tenant, limit, window, undatable_count))
            undatable = undatable_count[0]
        _warn_undatable(undatable, environment)
        shown = _shown_columns(columns, out_format, every)
        render.write_records(_with_first(st, records, shown, out_format), fmt=out_format, columns=shown,
                             headers=_headers(shown, out_format), title=st.location.display, environment=environment)
        if not records and limit != 0:
            _say_empty(st, environment, tenant=tenant, sub_tenant=sub_tenant, window=window, status=status, session=session)


def _check_run_state_options(tenant, sub_tenant, status, sort, session):
    """(statuses, sort) of --status/--sort, checked; usage errors for the rest."""

    _check_tenant(tenant, sub_tenant)
    statuses = None
    if status:
        statuses = set()
        for value in status:
            for word in value.split(","):
                # Values are case-insensitive everywhere (--format, --speaker, --status, --sort, --color).
                if word.lower() not in STATUSES:
                    raise UsageError(f"unknown --status '{word}'", hint=f"use one of: {listed(STATUSES)}")
                statuses.add(word.lower())
    chosen = sort.lower() if sort is not None else DEFAULT_SORT
    if chosen not in SORTS:
        raise UsageError(f"unknown --sort '{sort}'", hint=f"use one of: {listed(SORTS)}")
    if session is not None and not session:
        raise UsageError("--session is empty")
    return statuses, chosen


def _run_state_records(st, tenant, sub_tenant, limit, statuses, chosen, *, session, reverse, with_size, window, counted=False):
    from symfonic_cli.threadkey import tenant_prefix
    from symfonic_cli.threadstate.listing import run_state_rows

    columns = THREAD_COLUMNS + (("status",) if statuses is not None else ()) + (("size_bytes",) if with_size else ())
    rows = run_state_rows(
        st, prefix=tenant_prefix(tenant, sub_tenant) if tenant is not None else None, session=session,
        statuses=statuses, sort=chosen, reverse=reverse, with_size=with_size, limit=limit, window=window,
    )
    records = []
    for r in rows:
        rec = _thread_record(r)
        if statuses is not None:
            rec["status"] = r.status
        if with_size:
            rec["size_bytes"] = r.size_bytes
        records.append(rec)
    if counted:
        return columns, records, sum(r.undatable for r in rows)
    return columns, records


def _say_empty(st: Store, environment: Environment, **filters) -> None:
    """On a terminal, an empty listing says so on stderr, and how many threads the store holds
    (piped, it stays silent: an empty answer is an answer)."""
    from symfonic_cli.render import escape_inline, is_terminal, shown_time

    env = environment
    if not is_terminal(env.stderr):
        return
    given = []
    for name, value in filters.items():
        if value is None:
            continue
        if name == "window":
            if value.inactive_before is not None:
                given.append(f"last activity before {shown_time(value.inactive_before, env)}")
            if value.active_from is not None:
                given.append(f"active since {shown_time(value.active_from, env)}")
            continue
        if name == "status":
            value = ",".join(value)
        given.append(f"--{name.replace('_', '-')} '{value}'")
    total = sum(1 for _ in st.list_threads())
    what = f" ({'; '.join(given)})" if given else ""
    env.stderr.write(escape_inline(f"symfonic: no threads match{what}; the store holds {total} threads") + "\n")


def store_info(store: Optional[str], fmt: Optional[str], environment: Environment | None = None) -> None:
    environment = environment or run_environment()
    out_format = check_format(fmt, env=environment)
    from symfonic_cli import render

    with open_for_reading(store, environment=environment) as st:
        i = st.info()
    pairs = info_pairs(i, json=out_format in ("json", "jsonl"))
    render.write_pairs(pairs, fmt=out_format, title="store info", environment=environment)


def info_pairs(i, *, json: bool) -> list:
    """``store info``'s (name, value) pairs (the Python API's ``Store.info`` too); JSON names have no spaces."""
    pairs = [("kind", i.kind), ("location", i.location), ("threads", i.threads), ("checkpoints", i.checkpoints), ("writes", i.writes)]
    pairs += list(i.details.items())
    return [(k.replace(" ", "_"), v) for k, v in pairs] if json else pairs
