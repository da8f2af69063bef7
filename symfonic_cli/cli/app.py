"""The ``symfonic`` entry point: which route runs the command line, error lines and exit codes.

Nothing heavy is imported here: typer and click only when the command line needs them
(``root.py``), langgraph, langchain and the drivers only inside the commands that use them,
so ``symfonic --help``, completion and the quick listings stay instant.
"""

from __future__ import annotations

import os
import sys

from symfonic_cli.cli.common import debug_enabled
from symfonic_cli.errors import EXIT_UNEXPECTED, EXIT_USAGE, SymfonicError

# Each command group's module, imported only when that group runs (or for help/completion).
GROUPS = {
    "transcript": "symfonic_cli.cli.transcript",
    "threads": "symfonic_cli.cli.threads",
    "store": "symfonic_cli.cli.store",
    "compat": "symfonic_cli.cli.compat",
    "thread": "symfonic_cli.cli.thread",
    "migrate": "symfonic_cli.cli.migrate",
    "demo": "symfonic_cli.cli.demo",
}
# Modules that add commands to a group another module registers: (group, module).
GROUP_EXTENSIONS = (
    ("thread", "symfonic_cli.cli.history"),
    ("thread", "symfonic_cli.cli.export"),
)
# Root options that take a value (to find the command name in argv).
_VALUE_OPTIONS = {"--connect-timeout", "--pg-schema", "--checkpoint-collection", "--writes-collection"}


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
        return arg if arg in GROUPS else None
    return None


def _fail(line: str, code: int) -> None:
    from symfonic_cli.render import escape_inline

    sys.stderr.write(f"symfonic: error: {escape_inline(line)}\n")
    sys.stderr.flush()
    raise SystemExit(code)


def _run(args: list[str]):
    from symfonic_cli.cli import fast

    if fast.run(args):
        return 0
    # Stored integers are values up to this many digits (README "Limits"), printed in full.
    from symfonic_cli.codec.metadata_json import MAX_INT_DIGITS

    if hasattr(sys, "set_int_max_str_digits") and 0 < sys.get_int_max_str_digits() < MAX_INT_DIGITS:
        sys.set_int_max_str_digits(MAX_INT_DIGITS)
    from typer.main import get_command

    from symfonic_cli.cli.root import build_app

    command = get_command(build_app(_command_name(args)))
    return command.main(args=args, prog_name="symfonic", standalone_mode=False)


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        rv = _run(args)
    except SymfonicError as exc:
        if debug_enabled():
            raise
        _fail(exc.line(), exc.exit_code)
    except (KeyboardInterrupt, EOFError):
        _fail("interrupted", 130)
    except BrokenPipeError:
        # The reader went away (| head): no traceback, no message, and exit 1, as click ends
        # every command it runs (so both routes, and every command, end alike).
        try:
            sys.stdout = open(os.devnull, "w")
        finally:
            raise SystemExit(1)
    except SystemExit:
        raise
    except Exception as exc:
        click_exc = _click_exception(exc)
        if click_exc is not None:
            code, message = click_exc
            if message:
                _fail(message, code)
            raise SystemExit(code)
        if debug_enabled():
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
