"""``symfonic store info``: what kind of store this is and how much it holds."""

from __future__ import annotations

from typing import Annotated

import typer

from symfonic_cli.cli import listing
from symfonic_cli.cli.common import MAX_COUNT
from symfonic_cli.cli.options import FormatOpt, RecordFormatOpt, StoreOpt
from symfonic_cli.vocabulary import GROUP_HELP, RECORD_FORMATS


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="store")


app = typer.Typer(help=GROUP_HELP["store"], no_args_is_help=True)

KeepOpt = Annotated[int, typer.Option("--keep", min=1, max=MAX_COUNT, help="What a thread prune --keep N would remove (the latest N checkpoints of each namespace stay).")]


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
        # Where the file goes and what an entry looks like (docs/reference/stores.md), so the
        # next step needs no manual.
        env.stderr.write(f"symfonic: no stores configured in {render.escape_inline(config_path())}; an entry looks like:\n\n"
                         '  [stores.prod]\n  url = "postgresql://support@db.internal:5432/agents"\n\n'
                         "then: symfonic threads list -s prod\n")


@app.command("usage")
def usage(
    store: StoreOpt = None,
    top: Annotated[int, typer.Option("--top", "-n", min=1, max=MAX_COUNT, help="How many of the largest threads to list.")] = 10,
    keep: KeepOpt = 1,
    fmt: RecordFormatOpt = None,
) -> None:
    """Where the bytes are (file, tables or collections; checkpoints, writes, blobs; bytes per channel),
    the largest threads, and what thread prune --keep N would remove. Read-only, aggregated in the database."""
    from symfonic_cli.cli.common import open_reading
    from symfonic_cli.cli.common import check_format, environment
    from symfonic_cli.cli.usage_text import write_report

    env = environment()
    out_format = check_format(fmt, env=env, formats=RECORD_FORMATS)
    with open_reading(store, env) as st:
        report = st.usage(top=top, keep=keep)
    write_report(report.json_view(), out_format, env.stdout, environment=env)
