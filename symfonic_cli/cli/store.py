"""``symfonic store info``: what kind of store this is and how much it holds."""

from __future__ import annotations

import typer

from symfonic_cli.cli.common import FormatOpt, StoreOpt, check_format, open_for_reading

def register(root: typer.Typer) -> None:
    root.add_typer(app, name="store")


app = typer.Typer(help="Describe a store.", no_args_is_help=True)


@app.command("info")
def info(store: StoreOpt = None, fmt: FormatOpt = None) -> None:
    """Kind, location (password masked), tables, schema variant and counts."""
    out_format = check_format(fmt)
    from symfonic_cli import render

    with open_for_reading(store) as st:
        i = st.info()
    pairs = [("kind", i.kind), ("location", i.location), ("threads", i.threads), ("checkpoints", i.checkpoints), ("writes", i.writes)]
    pairs += list(i.details.items())
    if out_format in ("json", "jsonl"):
        pairs = [(k.replace(" ", "_"), v) for k, v in pairs]
    render.write_pairs(pairs, fmt=out_format, title="store info")
