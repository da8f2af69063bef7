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


@app.command("list", epilog="Examples:\n\n  symfonic store list\n\n  symfonic store list --format json")
def list_stores(fmt: FormatOpt = None) -> None:
    """The stores named in the config file (~/.config/symfonic/config.toml or $SYMFONIC_CONFIG):
    name, kind and URL with the password masked; use a name as --store NAME."""
    from symfonic_cli import render
    from symfonic_cli.cli.common import check_format, environment
    from symfonic_cli.location import config_path, configured_stores

    env = environment()
    out_format = check_format(fmt, env=env)
    rows = [{"name": n, "kind": k, "url": u} for n, k, u in configured_stores()]
    render.write_records(rows, fmt=out_format, columns=("name", "kind", "url"), title=config_path(), environment=env)
    if not rows and render.is_terminal(env.stderr):
        env.stderr.write(f"symfonic: no stores configured in {render.escape_inline(config_path())}\n")
