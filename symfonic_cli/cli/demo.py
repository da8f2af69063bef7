"""``symfonic demo PATH``: create a small real store to try the tool on."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from symfonic_cli.errors import UsageError
from symfonic_cli.vocabulary import GROUP_HELP


from symfonic_cli.demo import MAX_THREADS, MAX_TOTAL_TURNS, MAX_TURNS, MIN_THREADS, MIN_TURNS  # langgraph only when run


def demo(
    path: Annotated[Path, typer.Argument(help="The SQLite file to create (must not exist yet).")],
    threads: Annotated[Optional[int], typer.Option(
        "--threads", min=MIN_THREADS, max=MAX_THREADS,
        help=f"Threads in all ({MIN_THREADS} to {MAX_THREADS:,}): the tour's {MIN_THREADS}, then more conversations "
             "over five tenants and sub-tenants, last active from today to 450 days ago, by two releases.")] = None,
    turns: Annotated[Optional[int], typer.Option(
        "--turns", min=MIN_TURNS, max=MAX_TURNS,
        help=f"Turns of each added conversation ({MIN_TURNS} to {MAX_TURNS}; default 3); added threads times turns at most {MAX_TOTAL_TURNS:,}.")] = None,
) -> None:
    # The help: vocabulary.GROUP_HELP["demo"] (the root's help says the same).
    from symfonic_cli.cli.common import environment
    from symfonic_cli.demo import DEFAULT_TURNS, create_demo_store, is_demo_store
    from symfonic_cli.render import escape_inline

    sized = threads is not None or turns is not None
    n, t = threads if threads is not None else MIN_THREADS, turns if turns is not None else DEFAULT_TURNS
    if turns is not None and n == MIN_THREADS:
        raise UsageError("--turns sets the turns of the conversations --threads adds", hint=f"give --threads more than {MIN_THREADS}")
    if (n - MIN_THREADS) * t > MAX_TOTAL_TURNS:
        raise UsageError(f"--threads {n} --turns {t} is {(n - MIN_THREADS) * t:,} turns; at most {MAX_TOTAL_TURNS:,}",
                         hint="fewer threads or fewer turns")
    if path.exists():
        if path.is_file() and not sized and is_demo_store(path):
            typer.echo(f"{escape_inline(str(path))} is the demo store already: kept as it is")
            return
        raise UsageError(f"{path} already exists; the demo never overwrites a file", hint="choose a new path")
    if not path.parent.exists():
        raise UsageError(f"folder {path.parent} does not exist")

    import sqlite3

    from symfonic_cli.errors import StoreError
    from symfonic_cli.stores.sqlite.connect import create_new_file, remove_new_file

    env = environment()
    from symfonic_cli.progress import Progress

    create_new_file(str(path), "the demo store")  # exit 2 or 4 here, before anything is written
    bar = Progress(env.stderr, "wrote", n) if n > MIN_THREADS else None
    try:
        keys = create_demo_store(path, threads=n, turns=t, progress=None if bar is None else lambda done, _total: bar.step(done))
    except BaseException as exc:
        remove_new_file(str(path))  # no half-written store that the next run calls "already exists"
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"cannot write the demo store {path}: {exc}; nothing was left behind") from None
        raise
    if bar is not None:
        bar.clear()
    if len(keys) > MIN_THREADS:
        typer.echo(f"created {escape_inline(str(path))} with {len(keys):,} threads: the tour's {MIN_THREADS} "
                   f"({', '.join(keys[:6] + keys[-2:])}) and {len(keys) - MIN_THREADS:,} more of {t} turns each")
    else:
        typer.echo(f"created {escape_inline(str(path))} with {len(keys)} threads: {', '.join(keys)}")


def register(root: typer.Typer) -> None:
    root.command("demo", help=GROUP_HELP["demo"])(demo)
