"""``symfonic threads list``: what threads a store holds, aggregated in the database."""

from __future__ import annotations

from typing import Annotated, Optional

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
) -> None:
    """One row per thread, newest activity first (activity is read from the checkpoint ids)."""
    listing.list_threads(store, tenant, sub_tenant, limit, fmt)
