"""The library behind ``threads list`` and ``store info``: their records from an open store, as
``-f json`` prints them (the CLI renders them, the Python API returns them).

Lean on purpose: the quick route (cli/fast.py) loads it, so no typing or dataclasses at import.
"""

from __future__ import annotations

from symfonic_cli.clock import iso_utc
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


def thread_records(
    st: Store, tenant: Optional[str], sub_tenant: Optional[str], limit: Optional[int], *,
    status: Optional[list[str]] = None, session: Optional[str] = None, sort: Optional[str] = None,
    reverse: bool = False, with_size: bool = False, inactive_for: Optional[str] = None,
    inactive_since: Optional[str] = None, active_within: Optional[str] = None, since: Optional[str | datetime] = None,
    until: Optional[str | datetime] = None, tz: Optional[tzinfo] = None,
) -> tuple[tuple[str, ...], list[dict[str, Any]]]:
    """(columns, records) of ``threads list`` on an open store: what ``-f json`` prints (the Python API)."""
    window = activity_window(inactive_for, inactive_since, active_within, since, until, tz=tz)
    if is_plain(status, session, sort, reverse, with_size):
        check_tenant(tenant, sub_tenant)
        return THREAD_COLUMNS, list(plain_records(st, tenant, sub_tenant, limit, window))
    statuses, chosen = check_run_state_options(tenant, sub_tenant, status, sort, session)
    columns, records, _undatable = run_state_records(st, tenant, sub_tenant, limit, statuses, chosen, session=session,
                                                     reverse=reverse, with_size=with_size, window=window)
    return columns, records


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


def run_state_records(
    st: Store, tenant: Optional[str], sub_tenant: Optional[str], limit: Optional[int], statuses: Optional[set[str]],
    chosen: str, *, session: Optional[str], reverse: bool, with_size: bool, window: Optional[ActivityWindow],
) -> tuple[tuple[str, ...], list[dict[str, Any]], int]:
    """(columns, records, how many threads' activity is undatable) of a listing with run state."""
    from symfonic_cli.threadkey import tenant_prefix
    from symfonic_cli.threadstate.listing import run_state_rows

    columns = THREAD_COLUMNS + (("status",) if statuses is not None else ()) + (("size_bytes",) if with_size else ())
    rows = run_state_rows(
        st, prefix=tenant_prefix(tenant, sub_tenant) if tenant is not None else None, session=session,
        statuses=statuses, sort=chosen, reverse=reverse, with_size=with_size, limit=limit, window=window,
    )
    records = []
    for r in rows:
        rec = thread_record(r)
        if statuses is not None:
            rec["status"] = r.status
        if with_size:
            rec["size_bytes"] = r.size_bytes
        records.append(rec)
    return columns, records, sum(r.undatable for r in rows)


def info_pairs(i: StoreInfo, *, json: bool) -> list[tuple[str, Any]]:
    """``store info``'s (name, value) pairs (the Python API's ``Store.info`` too); JSON names have no spaces."""
    pairs = [("kind", i.kind), ("location", i.location), ("threads", i.threads), ("checkpoints", i.checkpoints), ("writes", i.writes)]
    pairs += list(i.details.items())
    return [(k.replace(" ", "_"), v) for k, v in pairs] if json else pairs
