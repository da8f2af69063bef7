"""The ``symfonic`` command: command groups, error handling and exit codes.

Heavy libraries (langgraph, langchain, drivers) are imported inside the commands that use
them, so ``symfonic --help`` and shell completion stay instant.
"""

from __future__ import annotations

import os
import sys
from typing import Optional

import typer

from symfonic_cli import __version__
from symfonic_cli.errors import EXIT_UNEXPECTED, EXIT_USAGE, SymfonicError

# Each command group's module, imported only when that group runs (or for help/completion).
_GROUPS = {
    "transcript": "symfonic_cli.cli.transcript",
    "threads": "symfonic_cli.cli.threads",
    "store": "symfonic_cli.cli.store",
    "compat": "symfonic_cli.cli.compat",
    "thread": "symfonic_cli.cli.erase",
    "migrate": "symfonic_cli.cli.migrate",
    "demo": "symfonic_cli.cli.demo",
}
# Root options that take a value (to find the command name in argv).
_VALUE_OPTIONS = {"--connect-timeout", "--pg-schema", "--checkpoint-collection", "--writes-collection"}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"symfonic {__version__}")
        raise typer.Exit()


def _root(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors.", envvar="SYMFONIC_DEBUG"),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
    connect_timeout: float = typer.Option(
        10.0, "--connect-timeout", min=0.1, envvar="SYMFONIC_CONNECT_TIMEOUT", help="Seconds to wait for a database server."
    ),
    pg_schema: Optional[str] = typer.Option(
        None, "--pg-schema", envvar="SYMFONIC_PG_SCHEMA", help="PostgreSQL schema holding the checkpoint tables."
    ),
    checkpoint_collection: Optional[str] = typer.Option(
        None, "--checkpoint-collection", envvar="SYMFONIC_CHECKPOINT_COLLECTION", help="MongoDB checkpoints collection."
    ),
    writes_collection: Optional[str] = typer.Option(
        None, "--writes-collection", envvar="SYMFONIC_WRITES_COLLECTION", help="MongoDB pending-writes collection."
    ),
) -> None:
    """Connection options go before the command: symfonic --connect-timeout 5 threads list ..."""
    from symfonic_cli.cli import common

    if debug:
        os.environ["SYMFONIC_DEBUG"] = "1"
    common.connection_options.clear()
    common.connection_options.update(
        {
            k: v
            for k, v in {
                "connect_timeout": connect_timeout,
                "pg_schema": pg_schema,
                "checkpoint_collection": checkpoint_collection,
                "writes_collection": writes_collection,
            }.items()
            if v is not None
        }
    )


def build_app(only: str | None = None) -> typer.Typer:
    """The root command with every group, or with just the group ``only`` (start-up speed)."""
    from importlib import import_module

    import typer.core

    # Plain click help: typer's rich help imports markdown and rich's console (~80 ms per start).
    typer.core.HAS_RICH = False
    root = typer.Typer(
        name="symfonic",
        help="Inspect, report on, erase and migrate the LangGraph checkpoint stores of symfonic-core agents.",
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    root.callback()(_root)
    for name, module_name in _GROUPS.items():
        if only is None or name == only:
            import_module(module_name).register(root)
    return root


def _command_name(argv: list[str]) -> str | None:
    """The group named on the command line, when it is one we know; None means 'load all'."""
    if os.environ.get("_SYMFONIC_COMPLETE"):
        return None
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg == "--":
            return None
        if arg.startswith("-"):
            skip = arg in _VALUE_OPTIONS
            continue
        return arg if arg in _GROUPS else None
    return None


def _debug() -> bool:
    return os.environ.get("SYMFONIC_DEBUG", "") not in ("", "0")


def _fail(line: str, code: int) -> None:
    from symfonic_cli.render import escape_inline

    sys.stderr.write(f"symfonic: error: {escape_inline(line)}\n")
    sys.stderr.flush()
    raise SystemExit(code)


def main(argv: list[str] | None = None) -> None:
    from typer.main import get_command

    args = list(sys.argv[1:] if argv is None else argv)
    command = get_command(build_app(_command_name(args)))
    try:
        rv = command.main(args=args, prog_name="symfonic", standalone_mode=False)
    except SymfonicError as exc:
        if _debug():
            raise
        _fail(exc.line(), exc.exit_code)
    except (KeyboardInterrupt, EOFError):
        _fail("interrupted", 130)
    except BrokenPipeError:
        # The reader went away (| head): not an error worth a traceback.
        try:
            sys.stdout = open(os.devnull, "w")
        finally:
            raise SystemExit(0)
    except SystemExit:
        raise
    except Exception as exc:
        click_exc = _click_exception(exc)
        if click_exc is not None:
            code, message = click_exc
            if message:
                _fail(message, code)
            raise SystemExit(code)
        if _debug():
            raise
        _fail(f"unexpected {type(exc).__name__}: {exc} (rerun with --debug for a traceback)", EXIT_UNEXPECTED)
    else:
        raise SystemExit(rv if isinstance(rv, int) else 0)


def _click_exception(exc: Exception):
    """Map click's own exceptions (bad options, aborted prompts) to exit codes and one line."""
    import click

    if isinstance(exc, click.UsageError):
        hint = ""
        if exc.ctx is not None:
            hint = f" (see '{exc.ctx.command_path} --help')"
        return EXIT_USAGE, f"{exc.format_message()}{hint}"
    if isinstance(exc, click.exceptions.Abort):
        return 1, "aborted"
    if isinstance(exc, click.ClickException):
        return exc.exit_code, exc.format_message()
    if isinstance(exc, click.exceptions.Exit):
        return exc.exit_code, None
    return None
