"""``symfonic threads list``: what threads a store holds, aggregated in the database."""

from __future__ import annotations

from typing import Annotated, List, Optional

import typer

from symfonic_cli.cli import listing, optionspec
from symfonic_cli.cli.options import typer_options
from symfonic_cli.vocabulary import GROUP_HELP


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="threads")


app = typer.Typer(help=GROUP_HELP["threads"], no_args_is_help=True)
# threads list's options, from the table the quick route (fast.py) parses too.
LIST = typer_options(optionspec.THREADS_LIST)
# threads search's options, from the table the quick route parses too (the filters are the listing's).
SEARCH = typer_options({k: v for k, v in optionspec.THREADS_SEARCH.items() if k != "text"})


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
    text: Annotated[str, typer.Argument(help=optionspec.THREADS_SEARCH["text"]["help"])],
    store: Annotated[Optional[str], SEARCH["store"]] = None,
    case_sensitive: Annotated[bool, SEARCH["case_sensitive"]] = False,
    tools: Annotated[bool, SEARCH["tools"]] = False,
    tenant: Annotated[Optional[str], SEARCH["tenant"]] = None,
    sub_tenant: Annotated[Optional[str], SEARCH["sub_tenant"]] = None,
    session: Annotated[Optional[str], SEARCH["session"]] = None,
    inactive_for: Annotated[Optional[str], SEARCH["inactive_for"]] = None,
    inactive_since: Annotated[Optional[str], SEARCH["inactive_since"]] = None,
    active_within: Annotated[Optional[str], SEARCH["active_within"]] = None,
    limit: Annotated[Optional[int], SEARCH["limit"]] = None,
    fmt: Annotated[Optional[str], SEARCH["fmt"]] = None,
) -> None:
    """The messages holding TEXT: one row per message (key, index as transcript show counts, role, timestamp, snippet)."""
    from symfonic_cli.cli.common import environment
    from symfonic_cli.cli.search import threads_search

    threads_search(
        store, text, case_sensitive=case_sensitive, tools=tools, tenant=tenant, sub_tenant=sub_tenant, session=session,
        inactive_for=inactive_for, inactive_since=inactive_since, active_within=active_within, limit=limit, fmt=fmt,
        environment=environment(),
    )
