"""``symfonic threads list``: what threads a store holds, aggregated in the database."""

from __future__ import annotations

from typing import Annotated, Optional

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
    store: LIST["store"] = None,
    tenant: LIST["tenant"] = None,
    sub_tenant: LIST["sub_tenant"] = None,
    limit: LIST["limit"] = None,
    fmt: LIST["fmt"] = None,
    status: LIST["status"] = None,
    session: LIST["session"] = None,
    sort: LIST["sort"] = None,
    reverse: LIST["reverse"] = False,
    with_size: LIST["with_size"] = False,
    inactive_for: LIST["inactive_for"] = None,
    inactive_since: LIST["inactive_since"] = None,
    active_within: LIST["active_within"] = None,
    since: LIST["since"] = None,
    until: LIST["until"] = None,
    columns: LIST["columns"] = None,
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
    tenant: SEARCH["tenant"] = None,
    sub_tenant: SEARCH["sub_tenant"] = None,
    session: SEARCH["session"] = None,
    inactive_for: SEARCH["inactive_for"] = None,
    inactive_since: SEARCH["inactive_since"] = None,
    active_within: SEARCH["active_within"] = None,
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
