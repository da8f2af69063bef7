"""What ``threads list`` and ``store info`` do once their options are parsed.

Free of typer: both the typer commands and the quick route (``fast.py``) call these.
"""

from __future__ import annotations

from symfonic_cli.cli.common import check_format, environment as run_environment
from symfonic_cli.errors import UsageError
from symfonic_cli.vocabulary import RECORD_FORMATS, STATUSES

from symfonic_cli.cli.columns import CLIPPED, _headers, _projected, _shown_columns, default_columns, parse_columns

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.api.store import Store
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
    """``threads list`` with every option parsed (the typer command and the quick route): the API's
    ``Store.listing``, streamed into the writer."""
    from symfonic_cli.api.listing import check_listing
    from symfonic_cli.api.store import activity_window

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
    zone = environment.zone()
    # Judged before the store is opened (a usage error needs no connection).
    window = activity_window(inactive_for, inactive_since, active_within, since, until, zone=zone)
    check_listing(tenant, sub_tenant, status=status, session=session, sort=sort, reverse=reverse, with_size=with_size)
    plain = status is None and session is None and sort is None and not reverse and not with_size
    out_format = check_format(fmt, env=environment, formats=RECORD_FORMATS)
    from symfonic_cli import render
    from symfonic_cli.cli.common import open_reading

    with open_reading(store, environment, zone=zone) as st:
        records = st.listing(tenant=tenant, sub_tenant=sub_tenant, limit=limit, status=status, session=session, sort=sort,
                             reverse=reverse, with_size=with_size, inactive_for=inactive_for, inactive_since=inactive_since,
                             active_within=active_within, since=since, until=until,
                             first_message=chosen is not None and "first_message" in chosen,
                             status_if_told=implied)
        if records.status_unknown is not None:
            from symfonic_cli.render import escape_inline
            from symfonic_cli.render.terminal import warn

            warn(environment, f"status not shown: {escape_inline(records.status_unknown)}")
        _warn_undatable(records.undatable_first, environment)
        every = records.columns[:-1] if records.columns[-1:] == ("first_message",) else records.columns
        shown = _shown_columns(chosen, out_format, every)
        # The records hold exactly their columns, in order (run state and size included): copied
        # into the shown ones only when those differ (--columns) or first_message is laid out.
        rows = records if shown == every == records.columns else _projected(records, shown, out_format)
        n = render.write_records(rows, fmt=out_format, columns=shown, headers=_headers(shown, out_format),
                                 title=st.location, environment=environment, clip=CLIPPED)
        _warn_undatable(records.undatable, environment)
        if not n and limit != 0:
            _say_empty(st, environment, tenant=tenant, sub_tenant=sub_tenant, window=window,
                       status=None if implied or plain else status, session=None if plain else session)


def _warn_undatable(n: int, environment: Environment) -> None:
    """Threads whose activity cannot be told are listed (never hidden, never swept), and said so."""
    if not n:
        return
    from symfonic_cli.render.terminal import warn

    warn(environment, f"{n} thread(s) hold a checkpoint whose id carries no time and that has no ts: "
                      "their activity is undatable (listed; a retention sweep never selects them)")


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
    total = st.thread_count()
    what = f" ({'; '.join(given)})" if given else ""
    env.stderr.write(escape_inline(f"symfonic: no threads match{what}; the store holds {total} threads") + "\n")


def store_info(store: Optional[str], fmt: Optional[str], environment: Environment | None = None) -> None:
    environment = environment or run_environment()
    out_format = check_format(fmt, env=environment)
    from symfonic_cli import render

    from symfonic_cli.cli.common import open_reading

    with open_reading(store, environment) as st:
        info = st.info()
    pairs = list(info.json_view().items()) if render.is_data(out_format) else info.pairs()
    render.write_pairs(pairs, fmt=out_format, title="store info", environment=environment)
