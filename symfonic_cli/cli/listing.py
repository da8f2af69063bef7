"""What ``threads list`` and ``store info`` do once their options are parsed.

Free of typer: both the typer commands and the quick route (``fast.py``) call these.
"""

from __future__ import annotations

from symfonic_cli.cli.common import check_format, environment as run_environment, open_for_reading
from symfonic_cli.errors import StoreError, UsageError
from symfonic_cli.listing import (
    activity_window,
    check_run_state_options,
    check_tenant,
    is_plain,
    plain_records,
    run_state_records,
)
from symfonic_cli.vocabulary import RECORD_FORMATS, STATUSES

from symfonic_cli.cli.columns import CLIPPED, THREAD_COLUMNS, _headers, _shown_columns, _with_first, default_columns, parse_columns

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

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
        chosen = default_columns(check_format(fmt, env=environment, formats=RECORD_FORMATS), wide=wide, with_size=with_size)
    if chosen is not None and "status" in chosen and not status:
        status = [",".join(STATUSES)]  # every status: the column is computed for all threads
    if chosen is not None and "size_bytes" in chosen:
        with_size = True
    window = activity_window(inactive_for, inactive_since, active_within, since, until, tz=environment.zone())
    if is_plain(status, session, sort, reverse, with_size):
        list_threads(store, tenant, sub_tenant, limit, fmt, environment=environment, window=window, columns=chosen)
        return
    list_run_states(
        store, tenant, sub_tenant, limit, fmt, status=status, session=session, sort=sort, reverse=reverse, with_size=with_size,
        window=window, environment=environment, columns=chosen, implied=implied,
    )


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
    check_tenant(tenant, sub_tenant)
    environment = environment or run_environment()
    out_format = check_format(fmt, env=environment, formats=RECORD_FORMATS)
    from symfonic_cli import render

    undatable = [0]
    with open_for_reading(store, environment=environment) as st:
        records = plain_records(st, tenant, sub_tenant, limit, window, undatable)
        shown = _shown_columns(columns, out_format, THREAD_COLUMNS)
        if shown != THREAD_COLUMNS:
            records = _with_first(st, records, shown, out_format)
        n = render.write_records(records, fmt=out_format, columns=shown, headers=_headers(shown, out_format),
                                 title=st.location.display, environment=environment, clip=CLIPPED)
        _warn_undatable(undatable[0], environment)
        if not n and limit != 0:
            _say_empty(st, environment, tenant=tenant, sub_tenant=sub_tenant, window=window)


def _warn_undatable(n: int, environment: Environment) -> None:
    """Threads whose activity cannot be told are listed (never hidden, never swept), and said so."""
    if not n:
        return
    from symfonic_cli.render.terminal import warn

    warn(environment, f"{n} thread(s) hold a checkpoint whose id carries no time and that has no ts: "
                      "their activity is undatable (listed; a retention sweep never selects them)")


def list_run_states(
    store, tenant: str | None, sub_tenant: str | None, limit: int | None, fmt, *, status, session: str | None, sort, reverse, with_size, window=None, environment: Environment | None = None,
    columns=None, implied: bool = False,
) -> None:
    """``threads list`` with --status/--session/--sort/--reverse/--with-size; ``implied``: the
    status is the default columns', not asked for (a store that cannot tell it lists without it)."""
    checked = check_run_state_options(tenant, sub_tenant, status, sort, session)
    environment = environment or run_environment()
    out_format = check_format(fmt, env=environment, formats=RECORD_FORMATS)
    from symfonic_cli import render

    with open_for_reading(store, environment=environment) as st:
        counted = [0]  # undatable threads among the streamed rows
        unknown = None  # why the status cannot be told
        try:
            every, records, undatable = run_state_records(
                st, tenant, sub_tenant, limit, *checked, session=session, reverse=reverse, with_size=with_size, window=window,
                undatable=counted,
            )
            # The first row is read before anything is written: a store that cannot tell the
            # status (an encrypted store without its key) says so here, where the plain listing can still serve.
            records = _primed(records)
        except StoreError as exc:
            if not implied:
                raise
            unknown = exc.line()
        if unknown is not None:
            # Out of the except: its traceback held the status read's statement open. The plain
            # listing's first row is read before the warning: a store it cannot list either gives one error.
            from symfonic_cli.render import escape_inline
            from symfonic_cli.render.terminal import warn

            every, records, undatable = THREAD_COLUMNS, _primed(plain_records(st, tenant, sub_tenant, limit, window, counted)), 0
            warn(environment, f"status not shown: {escape_inline(unknown)}")
        _warn_undatable(undatable, environment)
        shown = _shown_columns(columns, out_format, every)
        n = render.write_records(_with_first(st, records, shown, out_format), fmt=out_format, columns=shown,
                                 headers=_headers(shown, out_format), title=st.location.display, environment=environment, clip=CLIPPED)
        _warn_undatable(counted[0], environment)
        if not n and limit != 0:
            _say_empty(st, environment, tenant=tenant, sub_tenant=sub_tenant, window=window, status=None if implied else status,
                       session=session)


def _primed(records: Iterator[dict]) -> Iterator[dict]:
    """``records`` with its first item already read (its errors raised now, not mid-output)."""
    import itertools

    first = next(records, None)
    return iter(()) if first is None else itertools.chain((first,), records)


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
            given += value.words(lambda instant: str(shown_time(instant, env)))
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

    from symfonic_cli.api.opening import open_reading

    with open_reading(store, environment) as st:
        info = st.info()
    pairs = list(info.json_view().items()) if render.is_data(out_format) else info.pairs()
    render.write_pairs(pairs, fmt=out_format, title="store info", environment=environment)
