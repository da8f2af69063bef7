"""``symfonic store info``: what kind of store this is and how much it holds."""

from __future__ import annotations

import typer

from symfonic_cli.cli import listing
from symfonic_cli.cli.options import FormatOpt, StoreOpt


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="store")


app = typer.Typer(help="Describe a store.", no_args_is_help=True)


@app.command("info")
def info(store: StoreOpt = None, fmt: FormatOpt = None) -> None:
    """Kind, location (password masked), tables, schema variant and counts."""
    listing.store_info(store, fmt)
