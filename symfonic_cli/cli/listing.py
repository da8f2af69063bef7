"""What ``threads list`` and ``store info`` do once their options are parsed.

Free of typer: both the typer commands and the quick route (``fast.py``) call these.
"""

from __future__ import annotations

from symfonic_cli.cli.common import check_format, open_for_reading
from symfonic_cli.errors import UsageError
from symfonic_cli.model.times import checkpoint_id_time, iso_utc
from symfonic_cli.threadkey import parse_key

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

THREAD_COLUMNS = ("key", "tenant", "sub_tenant", "session", "checkpoints", "first_activity", "last_activity")
# What --columns may name; a table shows TABLE_COLUMNS unless told (tenant, sub-tenant and session
# repeat the key: JSON, text and --columns carry them), so it fits 80 columns with whole keys.
COLUMN_NAMES = THREAD_COLUMNS + ("status", "size_bytes", "first_message")
# A table's headers, short enough that key, checkpoints, last activity, status and size fit 80.
TABLE_HEADERS = {"sub_tenant": "sub-tenant", "first_activity": "first activity", "last_activity": "last activity",
                 "size_bytes": "size", "first_message": "first message"}
TABLE_COLUMNS = ("key", "checkpoints", "last_activity")
FIRST_WIDTH = 40  # characters of the first user message shown in a table or text


def parse_columns(text: Optional[str]) -> Optional[tuple]:
    """``--columns a,b,c``: names of COLUMN_NAMES, in the order given (case-insensitive)."""
    if text is None:
        return None
    names = tuple(w.strip().lower().replace("-", "_") for w in text.split(","))
    names = tuple("first_message" if n == "first" else n for n in names)  # "first": the first user message
    for name in names:
        if name not in COLUMN_NAMES:
            raise UsageError(f"unknown column '{name}' in --columns", hint=f"use any of: {', '.join(COLUMN_NAMES)}")
    if len(set(names)) != len(names):
        raise UsageError("--columns names a column twice")
    return names


def _shown_columns(chosen, out_format: str, every: tuple) -> tuple:
    if chosen is not None:
        return chosen
    if out_format == "table":
        return TABLE_COLUMNS + tuple(c for c in every if c in ("status", "size_bytes"))
    return every


def _headers(columns: tuple, out_format: str) -> tuple:
    return tuple(TABLE_HEADERS.get(c, c) for c in columns) if out_format == "table" else columns


def _with_first(st, records, columns, out_format: str):
    """Records holding only ``columns``; ``first_message``: the thread's first user message (cut
    in tables and text; whole in JSON)."""
    from symfonic_cli.render import cut

    for rec in records:
        if "first_message" in columns:
            from symfonic_cli.errors import StoreError
            from symfonic_cli.transcript.read import read_transcript

            try:
                rows = read_transcript(st, rec["key"], speaker={"user"}, index=0).rows
                text = rows[0].content if rows else None
            except StoreError:
                text = None  # a thread the transcript cannot read shows none here
            if text is not None and out_format not in ("json", "jsonl"):
                text = cut(" ".join(text.split()), FIRST_WIDTH)
            rec["first_message"] = text
        yield {c: rec.get(c) for c in columns}


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
    columns: Optional[str] = None,
    environment=None,
) -> None:
    """``threads list`` with every option parsed (the typer command and the quick route)."""
    chosen = parse_columns(columns)
    if chosen is not None and "status" in chosen and not status:
        from symfonic_cli.model.triggers import STATUSES

        status = [",".join(STATUSES)]  # every status: the column is computed for all threads
    if chosen is not None and "size_bytes" in chosen:
        with_size = True
    window = None
    if inactive_for is not None or inactive_since is not None or active_within is not None:
        from symfonic_cli.retention.window import window as activity_window

        window = activity_window(inactive_for=inactive_for, inactive_since=inactive_since, active_within=active_within)
    if status is None and session is None and sort is None and not reverse and not with_size:
        list_threads(store, tenant, sub_tenant, limit, fmt, environment=environment, window=window, columns=chosen)
        return
    list_run_states(
        store, tenant, sub_tenant, limit, fmt, status=status, session=session, sort=sort, reverse=reverse, with_size=with_size,
        window=window, environment=environment, columns=chosen,
    )


def list_threads(
    store: Optional[str],
    tenant: Optional[str],
    sub_tenant: Optional[str],
    limit: Optional[int],
    fmt: Optional[str],
    environment=None,
    window=None,
    columns=None,
) -> None:
    """``window``: an ActivityWindow (retention/window.py), compared in the database; ``columns``:
    the names --columns chose (parse_columns), None for the format's own."""
    if sub_tenant is not None and tenant is None:
        raise UsageError("--sub-tenant needs --tenant")
    out_format = check_format(fmt)
    from symfonic_cli import render

    bounds = {"last_before": window.last_before, "last_from": window.last_from} if window is not None else {}
    with open_for_reading(store, environment=environment) as st:
        records = (_thread_record(t) for t in st.list_threads(tenant=tenant, sub_tenant=sub_tenant, limit=limit, **bounds))
        shown = _shown_columns(columns, out_format, THREAD_COLUMNS)
        if shown != THREAD_COLUMNS:
            records = _with_first(st, records, shown, out_format)
        n = render.write_records(records, fmt=out_format, columns=shown, headers=_headers(shown, out_format),
                                 title=st.location.display, environment=environment)
        if not n and limit != 0:
            _say_empty(st, environment, tenant=tenant, sub_tenant=sub_tenant, window=window)


def _thread_record(t) -> dict:
    # Runs once per thread: plain calls, no properties (a listing may hold many thousands).
    parts = parse_key(t.key)
    first, last = checkpoint_id_time(t.first_checkpoint_id), checkpoint_id_time(t.last_checkpoint_id)
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
    store, tenant, sub_tenant, limit, fmt, *, status, session, sort, reverse, with_size, window=None, environment=None,
    columns=None,
) -> None:
    """``threads list`` with --status/--session/--sort/--reverse/--with-size."""
    from symfonic_cli.threadkey import tenant_prefix
    from symfonic_cli.threadstate.listing import SORTS, run_state_rows
    from symfonic_cli.model.triggers import STATUSES

    if sub_tenant is not None and tenant is None:
        raise UsageError("--sub-tenant needs --tenant")
    statuses = None
    if status:
        statuses = set()
        for value in status:
            for word in value.split(","):
                # Values are case-insensitive everywhere (--format, --speaker, --status, --sort, --color).
                if word.lower() not in STATUSES:
                    raise UsageError(f"unknown --status '{word}'", hint=f"use one of: {', '.join(STATUSES)}")
                statuses.add(word.lower())
    chosen = sort.lower() if sort is not None else "last-activity"
    if chosen not in SORTS:
        raise UsageError(f"unknown --sort '{sort}'", hint=f"use one of: {', '.join(SORTS)}")
    if session is not None and not session:
        raise UsageError("--session is empty")
    out_format = check_format(fmt)
    from symfonic_cli import render

    every = THREAD_COLUMNS + (("status",) if statuses is not None else ()) + (("size_bytes",) if with_size else ())
    with open_for_reading(store, environment=environment) as st:
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
        shown = _shown_columns(columns, out_format, every)
        render.write_records(_with_first(st, records, shown, out_format), fmt=out_format, columns=shown,
                             headers=_headers(shown, out_format), title=st.location.display, environment=environment)
        if not records and limit != 0:
            _say_empty(st, environment, tenant=tenant, sub_tenant=sub_tenant, window=window, status=status, session=session)


def _say_empty(st, environment, **filters) -> None:
    """On a terminal, an empty listing says so on stderr, and how many threads the store holds
    (piped, it stays silent: an empty answer is an answer)."""
    from symfonic_cli.environment import current
    from symfonic_cli.render import escape_inline, is_terminal, shown_time

    env = environment or current()
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


def store_info(store: Optional[str], fmt: Optional[str], environment=None) -> None:
    out_format = check_format(fmt)
    from symfonic_cli import render

    with open_for_reading(store, environment=environment) as st:
        i = st.info()
    pairs = [("kind", i.kind), ("location", i.location), ("threads", i.threads), ("checkpoints", i.checkpoints), ("writes", i.writes)]
    pairs += list(i.details.items())
    if out_format in ("json", "jsonl"):
        pairs = [(k.replace(" ", "_"), v) for k, v in pairs]
    render.write_pairs(pairs, fmt=out_format, title="store info", environment=environment)
