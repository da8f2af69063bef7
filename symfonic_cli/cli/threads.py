"""``symfonic threads list``: what threads a store holds, aggregated in the database."""

from __future__ import annotations

from typing import Optional

import typer
from typing_extensions import Annotated

from symfonic_cli.cli.common import FormatOpt, StoreOpt, check_format, open_for_reading
from symfonic_cli.errors import UsageError

def register(root: typer.Typer) -> None:
    root.add_typer(app, name="threads")


app = typer.Typer(help="List a store's threads.", no_args_is_help=True)

COLUMNS = ("key", "tenant", "sub_tenant", "session", "checkpoints", "first_activity", "last_activity")


@app.command("list")
def list_threads(
    store: StoreOpt = None,
    tenant: Annotated[Optional[str], typer.Option("--tenant", help="Only this tenant's threads.")] = None,
    sub_tenant: Annotated[Optional[str], typer.Option("--sub-tenant", help="Only this sub-tenant's threads (with --tenant; '_' for none).")] = None,
    limit: Annotated[Optional[int], typer.Option("--limit", "-n", min=0, help="At most N threads.")] = None,
    fmt: FormatOpt = None,
) -> None:
    """One row per thread, newest activity first (activity is read from the checkpoint ids)."""
    if sub_tenant is not None and tenant is None:
        raise UsageError("--sub-tenant needs --tenant")
    out_format = check_format(fmt)
    from symfonic_cli import render

    with open_for_reading(store) as st:
        records = (_record(t) for t in st.list_threads(tenant=tenant, sub_tenant=sub_tenant, limit=limit))
        render.write_records(records, fmt=out_format, columns=COLUMNS, title=st.location.display)


def _record(t) -> dict:
    parts = t.parts
    first, last = t.first_activity, t.last_activity
    return {
        "key": t.key,
        "tenant": parts.tenant if parts else None,
        "sub_tenant": parts.sub_tenant if parts else None,
        "session": parts.session if parts else None,
        "checkpoints": t.checkpoints,
        "first_activity": first.isoformat() if first else None,
        "last_activity": last.isoformat() if last else None,
    }
