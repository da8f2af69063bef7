"""``symfonic demo PATH``: create a small real store to try the tool on."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from symfonic_cli.errors import UsageError
from symfonic_cli.vocabulary import GROUP_HELP

from symfonic_cli.api.demo import MAX_THREADS, MAX_TOTAL_TURNS, MAX_TURNS, MIN_THREADS, MIN_TURNS  # langgraph only when run


def demo(
    path: Annotated[Path, typer.Argument(help="The SQLite file to create (must not exist yet).")],
    threads: Annotated[Optional[int], typer.Option(
        "--threads", min=MIN_THREADS, max=MAX_THREADS,
        help=f"Threads in all ({MIN_THREADS} to {MAX_THREADS:,}): the tour's {MIN_THREADS}, then more conversations "
             "over five tenants and sub-tenants, last active from today to 450 days ago, by two releases.")] = None,
    turns: Annotated[Optional[int], typer.Option(
        "--turns", min=MIN_TURNS, max=MAX_TURNS,
        help=f"Turns of each added conversation ({MIN_TURNS} to {MAX_TURNS}; default 3); added threads times turns at most {MAX_TOTAL_TURNS:,}.")] = None,
    encrypted: Annotated[Optional[Path], typer.Option(
        "--encrypted", metavar="KEY_FILE",
        help="Encrypt the store at rest, as LangGraph's EncryptedSerializer does, with a new random AES key "
             "written to KEY_FILE (mode 0600, must not exist yet; never printed). Read it back with "
             "--aes-key-file KEY_FILE. Needs the encrypted extra.")] = None,
) -> None:
    # The help: vocabulary.GROUP_HELP["demo"] (the root's help says the same).
    from symfonic_cli.cli.common import environment
    from symfonic_cli.api.demo import DEFAULT_TURNS, is_demo_store, write_demo_store
    from symfonic_cli.render import escape_inline

    sized = threads is not None or turns is not None
    n, t = threads if threads is not None else MIN_THREADS, turns if turns is not None else DEFAULT_TURNS
    if turns is not None and n == MIN_THREADS:
        raise UsageError("--turns sets the turns of the conversations --threads adds", hint=f"give --threads more than {MIN_THREADS}")
    if (n - MIN_THREADS) * t > MAX_TOTAL_TURNS:
        raise UsageError(f"--threads {n} --turns {t} is {(n - MIN_THREADS) * t:,} turns; at most {MAX_TOTAL_TURNS:,}",
                         hint="fewer threads or fewer turns")
    if path.exists():
        # Run again (a guide followed twice): kept, with its key file when it was made encrypted.
        if path.is_file() and not sized and is_demo_store(path) and (encrypted is None or encrypted.exists()):
            typer.echo(f"{escape_inline(str(path))} is the demo store already: kept as it is")
            return
        raise UsageError(f"{path} already exists; the demo never overwrites a file", hint="choose a new path")
    if not path.parent.exists():
        raise UsageError(f"folder {path.parent} does not exist")
    aes_key = None
    if encrypted is not None:
        aes_key = _new_key_file(encrypted, path)

    env = environment()
    from symfonic_cli.progress import Progress

    bar = Progress(env.stderr, "wrote", n) if n > MIN_THREADS else None
    try:
        keys = write_demo_store(path, threads=n, turns=t, progress=None if bar is None else lambda done, _total: bar.step(done),
                                aes_key=aes_key)
    except BaseException:
        if encrypted is not None:
            encrypted.unlink(missing_ok=True)  # no key left behind for a store that was not written
        raise
    if bar is not None:
        bar.clear()
    if len(keys) > MIN_THREADS:
        typer.echo(f"created {escape_inline(str(path))} with {len(keys):,} threads: the tour's {MIN_THREADS} "
                   f"({', '.join(keys[:6] + keys[-2:])}) and {len(keys) - MIN_THREADS:,} more of {t} turns each")
    else:
        typer.echo(f"created {escape_inline(str(path))} with {len(keys)} threads: {', '.join(keys)}")
    if encrypted is not None:
        typer.echo(f"encrypted with LangGraph's EncryptedSerializer (AES); the key is in {escape_inline(str(encrypted))} "
                   f"(mode 0600): symfonic --aes-key-file {escape_inline(str(encrypted))} ...")


def _new_key_file(key_file: Path, store: Path) -> bytes:
    """A new random key written to ``key_file`` (0600) before the store, after every check."""
    from symfonic_cli.api.demo import encryption_missing, new_aes_key, write_key_file

    if key_file.exists() or key_file.is_symlink():
        raise UsageError(f"--encrypted {key_file} already exists; the demo never overwrites a file", hint="choose a new path")
    if key_file.resolve() == store.resolve():
        raise UsageError("--encrypted names the store's own file", hint="give the key its own file, e.g. aes.key")
    if not key_file.parent.exists():
        raise UsageError(f"folder {key_file.parent} does not exist")
    hint = encryption_missing()
    if hint is not None:
        raise UsageError("--encrypted needs pycryptodome", hint=hint)
    key = new_aes_key()
    try:
        write_key_file(key_file, key)
    except OSError as exc:
        raise UsageError(f"--encrypted {key_file}: {exc.strerror or 'cannot be written'}") from None
    return key


def register(root: typer.Typer) -> None:
    root.command("demo", help=GROUP_HELP["demo"])(demo)
