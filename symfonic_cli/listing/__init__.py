"""The library behind ``threads list`` and ``store info``: their records from an open store, as
``-f json`` prints them (the CLI renders them, the Python API returns them).

Lean on purpose: the quick route (cli/fast.py) loads it, so no typing or dataclasses at import.
"""

from __future__ import annotations

from symfonic_cli.clock import iso_z
from symfonic_cli.errors import UsageError
from symfonic_cli.threadkey import parse_key
from symfonic_cli.vocabulary import DEFAULT_SORT, SORTS, STATUSES, listed

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from datetime import datetime, tzinfo
    from typing import Any, Optional

    from symfonic_cli.model.listing import StoreInfo, ThreadSummary
    from symfonic_cli.model.thread_row import ThreadRunState
    from symfonic_cli.retention.window import ActivityWindow
    from symfonic_cli.stores.protocol import Store

# The columns of a plain listing, in order (--status and --with-size add theirs).
THREAD_COLUMNS = ("key", "tenant", "sub_tenant", "session", "checkpoints", "first_activity", "last_activity")


def activity_window(
    inactive_for: Optional[str], inactive_since: Optional[str], active_within: Optional[str],
    since: Optional[str | datetime] = None, until: Optional[str | datetime] = None, *, tz: Optional[tzinfo] = None,
) -> Optional[ActivityWindow]:
    """The activity window the options give, or None without any."""
    if all(v is None for v in (inactive_for, inactive_since, active_within, since, until)):
        return None
    from symfonic_cli.retention.window import window

    return window(inactive_for=inactive_for, inactive_since=inactive_since, active_within=active_within,
                  since=since, until=until, tz=tz)


def check_tenant(tenant: Optional[str], sub_tenant: Optional[str]) -> None:
    if sub_tenant is not None and tenant is None:
        raise UsageError("--sub-tenant needs --tenant")


def is_plain(status: Optional[list[str]], session: Optional[str], sort: Optional[str], reverse: bool, with_size: bool) -> bool:
    """A listing without run state (the stores' own listing, streamed)."""
    return status is None and session is None and sort is None and not reverse and not with_size


def plain_records(
    st: Store, tenant: Optional[str], sub_tenant: Optional[str], limit: Optional[int],
    window: Optional[ActivityWindow], undatable: Optional[list[int]] = None,
) -> Iterator[dict[str, Any]]:
    """The listing's records, streamed; ``undatable[0]`` counts the threads whose activity has no time."""
    bounds = {"last_before": window.last_before, "last_from": window.last_from} if window is not None else {}
    for t in st.list_threads(tenant=tenant, sub_tenant=sub_tenant, limit=limit, **bounds):
        if undatable is not None:
            undatable[0] += t.undatable
        yield thread_record(t)


def thread_record(t: ThreadSummary | ThreadRunState) -> dict[str, Any]:
    # Runs once per thread: plain calls, no properties (a listing may hold many thousands).
    key = t.key
    parts = parse_key(key)
    tenant, sub_tenant, session = _NO_PARTS if parts is None else parts
    first, last = t.first_at, t.last_at  # by instant (stores/activity.py, threadstate/listing.py)
    return {
        "key": key,
        "tenant": tenant,
        "sub_tenant": sub_tenant,
        "session": session,
        "checkpoints": t.checkpoints,
        "first_activity": None if first is None else iso_z(first),
        "last_activity": None if last is None else iso_z(last),
    }


_NO_PARTS = (None, None, None)  # a key not of three parts


def check_run_state_options(
    tenant: Optional[str], sub_tenant: Optional[str], status: Optional[list[str]], sort: Optional[str], session: Optional[str],
) -> tuple[Optional[set[str]], str]:
    """(statuses, sort) of --status/--sort, checked; usage errors for the rest."""
    check_tenant(tenant, sub_tenant)
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


def run_state_columns(statuses: Optional[set[str]], with_size: bool) -> tuple[str, ...]:
    return THREAD_COLUMNS + (("status",) if statuses is not None else ()) + (("size_bytes",) if with_size else ())


def run_state_records(
    st: Store, tenant: Optional[str], sub_tenant: Optional[str], limit: Optional[int], statuses: Optional[set[str]],
    chosen: str, *, session: Optional[str], reverse: bool, with_size: bool, window: Optional[ActivityWindow],
    undatable: Optional[list[int]] = None,
) -> tuple[tuple[str, ...], Iterator[dict[str, Any]], int]:
    """(columns, records, how many threads' activity is undatable) of a listing with run state.
    In the listing's own order (newest activity first) the records stream, and ``undatable[0]``
    counts as they go (the count returned is then 0); another order sorts every kept row."""
    columns = run_state_columns(statuses, with_size)
    if chosen == DEFAULT_SORT and not reverse:
        return columns, paged_run_states(st, tenant, sub_tenant, limit, statuses, session=session, with_size=with_size,
                                         window=window, undatable=undatable), 0
    from symfonic_cli.threadkey import tenant_prefix
    from symfonic_cli.threadstate.listing import run_state_rows

    rows = run_state_rows(
        st, prefix=tenant_prefix(tenant, sub_tenant) if tenant is not None else None, session=session,
        statuses=statuses, sort=chosen, reverse=reverse, with_size=with_size, limit=limit, window=window,
    )
    return columns, (run_state_record(r, r.status, r.size_bytes, statuses, with_size) for r in rows), sum(r.undatable for r in rows)


def run_state_record(t: ThreadSummary | ThreadRunState, status: Optional[str], size: Optional[int], statuses: Optional[set[str]],
                     with_size: bool) -> dict[str, Any]:
    rec = thread_record(t)
    if statuses is not None:
        rec["status"] = status
    if with_size:
        rec["size_bytes"] = size
    return rec


# The run state of a listing's rows is read a batch of rows at a time: the first batch the page
# asked for (--limit 20 reads 20 threads), the next ones larger, up to this many.
STATE_BATCH = 500


def paged_run_states(
    st: Store, tenant: Optional[str], sub_tenant: Optional[str], limit: Optional[int], statuses: Optional[set[str]], *,
    session: Optional[str], with_size: bool, window: Optional[ActivityWindow], undatable: Optional[list[int]] = None,
) -> Iterator[dict[str, Any]]:
    """The listing's records with their run state, newest activity first (the order of the plain
    listing, decided by the store), streamed: the threads are taken in that order and the run
    state (and size) read only for them, a batch at a time, until ``limit`` rows are kept (a
    ``--status`` reads on until it has them, or the threads run out)."""
    from symfonic_cli.threadkey import parse_key

    if limit == 0:
        return
    bounds = {"last_before": window.last_before, "last_from": window.last_from} if window is not None else {}
    candidates = _listed_in_order(st, tenant, sub_tenant, limit, bounds)
    shown = 0
    size = min(limit, STATE_BATCH) if limit is not None else 50
    batch: list[ThreadSummary] = []
    for t in candidates:
        if session is not None:
            parts = parse_key(t.key)
            if parts is None or parts.session != session:
                continue
        batch.append(t)
        if len(batch) < size:
            continue
        for rec in _with_run_states(st, batch, statuses, with_size, undatable):
            yield rec
            shown += 1
            if limit is not None and shown >= limit:
                return
        batch = []
        size = min(size * 4, STATE_BATCH)
    for rec in _with_run_states(st, batch, statuses, with_size, undatable):
        yield rec
        shown += 1
        if limit is not None and shown >= limit:
            return


def _listed_in_order(st: Store, tenant: Optional[str], sub_tenant: Optional[str], limit: Optional[int],
                     bounds: dict[str, Any]) -> Iterator[ThreadSummary]:
    """The plain listing's threads, as many as a page of ``limit`` may need: first twice the
    page (a bounded query), then, when rows were left out (a status not kept, another session),
    the whole listing streamed past those already given."""
    if limit is None:
        yield from st.list_threads(tenant=tenant, sub_tenant=sub_tenant, **bounds)
        return
    asked = 2 * limit + 16
    seen = set()
    for t in st.list_threads(tenant=tenant, sub_tenant=sub_tenant, limit=asked, **bounds):
        seen.add(t.key)
        yield t
    if len(seen) < asked:
        return
    for t in st.list_threads(tenant=tenant, sub_tenant=sub_tenant, **bounds):
        if t.key not in seen:
            yield t


def _with_run_states(st: Store, batch: list[ThreadSummary], statuses: Optional[set[str]], with_size: bool,
                     undatable: Optional[list[int]]) -> Iterator[dict[str, Any]]:
    """The batch's records in its order, each with its run state (the same rules as ``thread
    show``) and size, read by key; a thread erased meanwhile, or whose status is not kept, is left out."""
    if not batch:
        return
    states = {r.key: r for r in st.iter_run_states(keys=[t.key for t in batch], with_size=with_size,
                                                     with_status=statuses is not None, statuses=statuses, totals=False)}
    for t in batch:
        r = states.get(t.key)
        if r is None or (statuses is not None and r.status not in statuses):
            continue
        if undatable is not None:
            undatable[0] += t.undatable
        yield run_state_record(t, r.status, r.size_bytes, statuses, with_size)


def info_pairs(i: StoreInfo, *, json: bool) -> list[tuple[str, Any]]:
    """``store info``'s (name, value) pairs (the Python API's ``Store.info`` too); JSON names have no spaces."""
    pairs = [("kind", i.kind), ("location", i.location), ("threads", i.threads), ("checkpoints", i.checkpoints), ("writes", i.writes)]
    pairs += list(i.details.items())
    return [(k.replace(" ", "_"), v) for k, v in pairs] if json else pairs
