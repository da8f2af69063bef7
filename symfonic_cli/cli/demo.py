"""``symfonic demo PATH``: create a small real store to try the tool on."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from symfonic_cli.errors import UsageError
from symfonic_cli.vocabulary import GROUP_HELP


def demo(
    path: Annotated[Path, typer.Argument(help="The SQLite file to create (must not exist yet).")],
) -> None:
    # The help: vocabulary.GROUP_HELP["demo"] (the root's help says the same).
    from symfonic_cli.demo import create_demo_store, is_demo_store
    from symfonic_cli.render import escape_inline

    if path.exists():
        if path.is_file() and is_demo_store(path):
            typer.echo(f"{escape_inline(str(path))} is the demo store already: kept as it is")
            return
        raise UsageError(f"{path} already exists; the demo never overwrites a file", hint="choose a new path")
    if not path.parent.exists():
        raise UsageError(f"folder {path.parent} does not exist")

    keys = create_demo_store(path)
    typer.echo(f"created {escape_inline(str(path))} with {len(keys)} threads: {', '.join(keys)}")


def register(root: typer.Typer) -> None:
    root.command("demo", help=GROUP_HELP["demo"])(demo)
