"""``Store.listing``: ``threads list``'s records streamed from an open store (a page costs a
page), with what the listing found on the way, for the command line (the Python API's
``Store.threads`` gives the same records as a list of rows).

Lean on purpose: the quick route (cli/fast.py) loads it, so no typing or dataclasses at import.
"""

from __future__ import annotations

from symfonic_cli.api.records import Stream
from symfonic_cli.errors import StoreError
from symfonic_cli.listing import THREAD_COLUMNS

# typing.TYPE_CHECKING without importing typing (the quick route loads this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, Optional


def check_listing(tenant: Optional[str], sub_tenant: Optional[str], *, status: Optional[list[str]] = None,
                  session: Optional[str] = None, sort: Optional[str] = None, reverse: bool = False,
                  with_size: bool = False) -> None:
    """The listing's options judged before a store is opened: a UsageError for a wrong one."""
    from symfonic_cli.listing import check_run_state_options, check_tenant, is_plain

    if is_plain(status, session, sort, reverse, with_size):
        check_tenant(tenant, sub_tenant)
    else:
        check_run_state_options(tenant, sub_tenant, status, sort, session)


def listing(backend: Any, location: str, *, tenant: Optional[str], sub_tenant: Optional[str], limit: Optional[int],
            status: Optional[list[str]], session: Optional[str], sort: Optional[str], reverse: bool, with_size: bool,
            window: Any, first_message: bool, status_if_told: bool) -> Stream:
    """The listing's Stream (see ``Store.listing``)."""
    from symfonic_cli.listing import (
        check_run_state_options,
        check_tenant,
        is_plain,
        plain_records,
        run_state_records,
    )

    counted = [0]  # undatable threads among the streamed rows
    if is_plain(status, session, sort, reverse, with_size):
        check_tenant(tenant, sub_tenant)
        records = plain_records(backend, tenant, sub_tenant, limit, window, counted)
        return _stream(backend, records, THREAD_COLUMNS, counted, location, first_message)
    checked = check_run_state_options(tenant, sub_tenant, status, sort, session)
    unknown = None  # why the status cannot be told
    try:
        every, records, before = run_state_records(
            backend, tenant, sub_tenant, limit, *checked, session=session, reverse=reverse, with_size=with_size,
            window=window, undatable=counted,
        )
        # The first row is read before anything is written: a store that cannot tell the status
        # (an encrypted store without its key) says so here, where the plain listing can still serve.
        records = _primed(records)
    except StoreError as exc:
        if not status_if_told:
            raise
        unknown = exc.line()
    if unknown is not None:
        # Out of the except: its traceback held the status read's statement open. The plain
        # listing's first row is read now: a store it cannot list either gives one error.
        every, records, before = THREAD_COLUMNS, _primed(plain_records(backend, tenant, sub_tenant, limit, window, counted)), 0
    stream = _stream(backend, records, every, counted, location, first_message)
    stream.undatable_first = before
    stream.status_unknown = unknown
    return stream


def _stream(backend: Any, records: Iterator[dict[str, Any]], columns: tuple[str, ...], counted: list[int], location: str,
            first_message: bool) -> Stream:
    if first_message:
        records = _with_first_message(backend, records)
        columns = (*columns, "first_message")
    return Stream(records, columns=columns, undatable=counted, location=location)


def _primed(records: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """``records`` with its first item already read (its errors raised now, not mid-output)."""
    import itertools

    first = next(records, None)
    return iter(()) if first is None else itertools.chain((first,), records)


def _with_first_message(backend: Any, records: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Each record with ``first_message``: the thread's first user message as stored (None when
    the transcript cannot be read), read as the record is."""
    from symfonic_cli.transcript.read import read_transcript

    for rec in records:
        try:
            rows = read_transcript(backend, rec["key"], speaker={"user"}, index=0).rows
            rec["first_message"] = rows[0].content if rows else None
        except StoreError:
            rec["first_message"] = None  # a thread the transcript cannot read shows none here
        yield rec
