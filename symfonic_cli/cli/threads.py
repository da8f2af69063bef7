"""``symfonic threads list``: what threads a store holds, aggregated in the database."""

from __future__ import annotations

from typing import Annotated, List, Optional

import typer

from symfonic_cli.cli import listing
from symfonic_cli.cli.common import MAX_COUNT
from symfonic_cli.cli.options import FormatOpt, StoreOpt


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="threads")


app = typer.Typer(help="List a store's threads.", no_args_is_help=True)


@app.command("list")
def list_threads(
    store: StoreOpt = None,
    tenant: Annotated[Optional[str], typer.Option("--tenant", help="Only this tenant's threads.")] = None,
    sub_tenant: Annotated[Optional[str], typer.Option("--sub-tenant", help="Only this sub-tenant's threads (with --tenant; '_' for none).")] = None,
    limit: Annotated[Optional[int], typer.Option("--limit", "-n", min=0, max=MAX_COUNT, help="At most N threads (0 to 1000000000).")] = None,
    fmt: FormatOpt = None,
    status: Annotated[Optional[List[str]], typer.Option("--status", help="Only threads in this run state: interrupted, error, pending, done (repeatable, or a comma list).")] = None,
    session: Annotated[Optional[str], typer.Option("--session", help="Only threads of this session id, any tenant.")] = None,
    sort: Annotated[Optional[str], typer.Option("--sort", help="last-activity (default), first-activity, checkpoints or size; newest or largest first.")] = None,
    reverse: Annotated[bool, typer.Option("--reverse", help="Reverse the order.")] = False,
    with_size: Annotated[bool, typer.Option("--with-size", help="Add size_bytes: the thread's stored checkpoints, blobs and writes.")] = False,
    inactive_for: Annotated[Optional[str], typer.Option("--inactive-for", help="Only threads whose last activity is older than this (90d, 12h, 2w).")] = None,
    inactive_since: Annotated[Optional[str], typer.Option("--inactive-since", help="Only threads with no activity since this ISO 8601 date or time (no offset means --tz, default UTC).")] = None,
    active_within: Annotated[Optional[str], typer.Option("--active-within", help="Only threads active within this time (7d, 12h).")] = None,
    since: Annotated[Optional[str], typer.Option("--since", help="Only threads last active at or after this time (2h ago, a date, an ISO 8601 time; as transcript show).")] = None,
    until: Annotated[Optional[str], typer.Option("--until", help="Only threads last active at or before this time (a date keeps that whole day).")] = None,
    columns: Annotated[Optional[str], typer.Option("--columns", help="Columns (JSON: fields) to show, in this order: key, tenant, sub_tenant, session, checkpoints, first_activity, last_activity, status, size_bytes, first_message (or first: the first user message).")] = None,
) -> None:
    """One row per thread, newest activity first (activity: the time in each checkpoint id, else its ts)."""
    listing.threads_list(
        store, tenant, sub_tenant, limit, fmt, status=status, session=session, sort=sort, reverse=reverse,
        with_size=with_size, inactive_for=inactive_for, inactive_since=inactive_since, active_within=active_within,
        since=since, until=until,
        columns=columns,
    )


@app.command("search")
def search_threads(
    text: Annotated[str, typer.Argument(help="The text to find, case-insensitive by Unicode case folding (straße finds STRASSE).")],
    store: StoreOpt = None,
    case_sensitive: Annotated[bool, typer.Option("--case-sensitive", help="Match the text exactly, case included.")] = False,
    tools: Annotated[bool, typer.Option("--tools", help="Also search tool calls (name, call id, arguments) and which tool answered.")] = False,
    tenant: Annotated[Optional[str], typer.Option("--tenant", help="Only this tenant's threads.")] = None,
    sub_tenant: Annotated[Optional[str], typer.Option("--sub-tenant", help="Only this sub-tenant's threads (with --tenant; '_' for none).")] = None,
    session: Annotated[Optional[str], typer.Option("--session", help="Only threads of this session id, any tenant.")] = None,
    inactive_for: Annotated[Optional[str], typer.Option("--inactive-for", help="Only threads whose last activity is older than this (90d, 12h, 2w).")] = None,
    inactive_since: Annotated[Optional[str], typer.Option("--inactive-since", help="Only threads with no activity since this ISO 8601 date or time (no offset means --tz, default UTC).")] = None,
    active_within: Annotated[Optional[str], typer.Option("--active-within", help="Only threads active within this time (7d, 12h).")] = None,
    limit: Annotated[Optional[int], typer.Option("--limit", "-n", min=0, max=MAX_COUNT, help="At most N threads, newest activity first (0 to 1000000000).")] = None,
    fmt: FormatOpt = None,
) -> None:
    """The messages holding TEXT: one row per message (key, index as transcript show counts, role, timestamp, snippet)."""
    from symfonic_cli.cli.common import environment
    from symfonic_cli.cli.search import threads_search

    threads_search(
        store, text, case_sensitive=case_sensitive, tools=tools, tenant=tenant, sub_tenant=sub_tenant, session=session,
        inactive_for=inactive_for, inactive_since=inactive_since, active_within=active_within, limit=limit, fmt=fmt,
        environment=environment(),
    )
