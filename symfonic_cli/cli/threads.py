"""``symfonic threads list``: what threads a store holds, aggregated in the database."""

from __future__ import annotations

from typing import Annotated, List, Optional

import typer

from symfonic_cli.cli import listing, optionspec
from symfonic_cli.cli.common import MAX_COUNT
from symfonic_cli.cli.options import RecordFormatOpt, StoreOpt, typer_options
from symfonic_cli.vocabulary import GROUP_HELP


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="threads")


app = typer.Typer(help=GROUP_HELP["threads"], no_args_is_help=True)
# threads list's options, from the table the quick route (fast.py) parses too.
LIST = typer_options(optionspec.THREADS_LIST)
# threads search shares the listing's filters.
SEARCH = typer_options({"tenant": optionspec.TENANT, "sub_tenant": optionspec.SUB_TENANT, "session": optionspec.SESSION,
                        "inactive_for": optionspec.INACTIVE_FOR, "inactive_since": optionspec.INACTIVE_SINCE,
                        "active_within": optionspec.ACTIVE_WITHIN})


@app.command("list")
def list_threads(
    store: Annotated[Optional[str], LIST["store"]] = None,
    tenant: Annotated[Optional[str], LIST["tenant"]] = None,
    sub_tenant: Annotated[Optional[str], LIST["sub_tenant"]] = None,
    limit: Annotated[Optional[int], LIST["limit"]] = None,
    fmt: Annotated[Optional[str], LIST["fmt"]] = None,
    status: Annotated[Optional[List[str]], LIST["status"]] = None,
    session: Annotated[Optional[str], LIST["session"]] = None,
    sort: Annotated[Optional[str], LIST["sort"]] = None,
    reverse: Annotated[bool, LIST["reverse"]] = False,
    with_size: Annotated[bool, LIST["with_size"]] = False,
    inactive_for: Annotated[Optional[str], LIST["inactive_for"]] = None,
    inactive_since: Annotated[Optional[str], LIST["inactive_since"]] = None,
    active_within: Annotated[Optional[str], LIST["active_within"]] = None,
    since: Annotated[Optional[str], LIST["since"]] = None,
    until: Annotated[Optional[str], LIST["until"]] = None,
    columns: Annotated[Optional[str], LIST["columns"]] = None,
    wide: Annotated[bool, LIST["wide"]] = False,
) -> None:
    """One row per thread, newest activity first (activity: the time in each checkpoint id, else its ts)."""
    listing.threads_list(
        store, tenant, sub_tenant, limit, fmt, status=status, session=session, sort=sort, reverse=reverse,
        with_size=with_size, inactive_for=inactive_for, inactive_since=inactive_since, active_within=active_within,
        since=since, until=until,
        columns=columns, wide=wide,
    )


@app.command("search")
def search_threads(
    text: Annotated[str, typer.Argument(help="The text to find, case-insensitive by Unicode case folding (straße finds STRASSE).")],
    store: StoreOpt = None,
    case_sensitive: Annotated[bool, typer.Option("--case-sensitive", help="Match the text exactly, case included.")] = False,
    tools: Annotated[bool, typer.Option("--tools", help="Also search tool calls (name, call id, arguments) and which tool answered.")] = False,
    tenant: Annotated[Optional[str], SEARCH["tenant"]] = None,
    sub_tenant: Annotated[Optional[str], SEARCH["sub_tenant"]] = None,
    session: Annotated[Optional[str], SEARCH["session"]] = None,
    inactive_for: Annotated[Optional[str], SEARCH["inactive_for"]] = None,
    inactive_since: Annotated[Optional[str], SEARCH["inactive_since"]] = None,
    active_within: Annotated[Optional[str], SEARCH["active_within"]] = None,
    limit: Annotated[Optional[int], typer.Option("--limit", "-n", min=0, max=MAX_COUNT, help="At most N threads, newest activity first (0 to 1000000000).")] = None,
    fmt: RecordFormatOpt = None,
) -> None:
    """The messages holding TEXT: one row per message (key, index as transcript show counts, role, timestamp, snippet)."""
    from symfonic_cli.cli.common import environment
    from symfonic_cli.cli.search import threads_search

    threads_search(
        store, text, case_sensitive=case_sensitive, tools=tools, tenant=tenant, sub_tenant=sub_tenant, session=session,
        inactive_for=inactive_for, inactive_since=inactive_since, active_within=active_within, limit=limit, fmt=fmt,
        environment=environment(),
    )
