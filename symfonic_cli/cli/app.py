"""The ``symfonic`` entry point: which route runs the command line, error lines and exit codes.

Nothing heavy is imported here: typer and click only when the command line needs them
(``root.py``), langgraph, langchain and the drivers only inside the commands that use them,
so ``symfonic --help``, completion and the quick listings stay instant.
"""

from __future__ import annotations

import os
import sys

from symfonic_cli.cli.common import debug_enabled
from symfonic_cli.cli.groups import GROUPS
from symfonic_cli.cli.rootspec import VALUE_OPTIONS as _VALUE_OPTIONS  # to find the command name in argv
from symfonic_cli.environment import Environment
from symfonic_cli.errors import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_UNEXPECTED,
    EXIT_USAGE,
    SymfonicError,
)

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn


def _names_no_command(argv: list[str]) -> bool:
    """Only root options (``symfonic --help``, ``symfonic`` alone): the root's help needs each
    command's summary line, not the commands."""
    if os.environ.get("_SYMFONIC_COMPLETE"):
        return False
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg == "--" or not arg.startswith("-"):
            return False
        skip = arg in _VALUE_OPTIONS
    return True


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


def _fail(line: str, code: int, environment: Environment, *, page: bool = False) -> NoReturn:
    from symfonic_cli.pager import HeldOutput, release
    from symfonic_cli.render import escape_inline

    # What the command printed before it failed (compat report's report before its exit 5) comes
    # first, as it was written (paged when ``page`` and taller than the screen): the error line is
    # the last thing on the screen, after the pager closed.
    if isinstance(environment.stdout, HeldOutput):
        release(environment.stdout, environment, ok=page)
    environment.stderr.write(f"symfonic: error: {escape_inline(line)}\n")
    environment.stderr.flush()
    raise SystemExit(code)


def _interrupted(environment: Environment) -> NoReturn:
    """Ctrl-C (or end of input at a prompt), on either route: one line, exit 130. On a terminal the
    line starts a line of its own (the terminal echoed ^C where the output stopped), styles off."""
    from symfonic_cli.render.terminal import colour_on, is_terminal

    if is_terminal(environment.stderr):
        # Output cut inside a styled cell would leave its style on: reset it (SGR 0).
        environment.stderr.write("\x1b[0m\n" if colour_on(environment, environment.stderr) else "\n")
    # What stdout still holds goes nowhere (held output too): nothing after the line, and no wait
    # at exit for a reader that does not read.
    from symfonic_cli.pager import HeldOutput

    if isinstance(environment.stdout, HeldOutput):
        environment.stdout = environment.stdout.real
    _silence(environment.stdout)
    _fail("interrupted", EXIT_INTERRUPTED, environment)


# The click command trees built in this process, by (group, summaries only): main() runs once per
# process from the shell but many times in one (tests, programs embedding the CLI), and a tree
# holds no state of a run (that lives in click's context and the Environment).
_TREES: dict[tuple[str | None, bool], object] = {}


def _command_tree(group: str | None, summaries: bool):
    tree = _TREES.get((group, summaries))
    if tree is None:
        from typer.main import get_command

        from symfonic_cli.cli.helptext import describe
        from symfonic_cli.cli.root import build_app
        from symfonic_cli.cli.rootopts import everywhere

        tree = get_command(build_app(group, summaries=summaries))
        everywhere(tree)  # root options after the command name too
        describe(tree)  # examples, choices, argument help
        _TREES[(group, summaries)] = tree
    return tree


def _run(args: list[str], environment: Environment):
    from symfonic_cli.cli import fast

    if fast.run(args, environment):
        return 0
    # Stored integers are values up to this many digits (README "Limits"), printed in full.
    from symfonic_cli.limits import MAX_INT_DIGITS

    if hasattr(sys, "set_int_max_str_digits") and 0 < sys.get_int_max_str_digits() < MAX_INT_DIGITS:
        sys.set_int_max_str_digits(MAX_INT_DIGITS)
    command = _command_tree(_command_name(args), _names_no_command(args))
    from contextlib import redirect_stderr, redirect_stdout

    # click and typer write help and prompts to sys.stdout/sys.stderr: the Environment's here.
    with redirect_stdout(environment.stdout), redirect_stderr(environment.stderr):
        if os.environ.get("_SYMFONIC_COMPLETE"):  # a script request (not a TAB): typer's own answer
            return command.main(args=args, prog_name="symfonic", standalone_mode=False, obj=environment)
        import click

        # click's main without typer's endings: typer makes Ctrl-C a silent exit 130, end of input
        # "aborted" exit 1, a reader gone away exit 1; these reach _main, which ends them as it
        # ends the quick route's.
        try:
            with command.make_context("symfonic", args, obj=environment) as ctx:
                return command.invoke(ctx)
        except click.exceptions.Exit as exc:  # --help, --version, typer.Exit
            return exc.exit_code


def main(argv: list[str] | None = None, environment: Environment | None = None) -> None:
    """The one boundary where errors become one line on stderr and an exit code."""
    mode = os.environ.get("_SYMFONIC_COMPLETE")
    if mode and mode.startswith("complete_"):
        # A TAB: answered from the cached command tree, without typer (symfonic_cli/complete.py).
        from symfonic_cli.complete import main as complete

        complete(mode)
        raise SystemExit(0)
    args = list(sys.argv[1:] if argv is None else argv)
    from symfonic_cli import pager

    # On a terminal, a reading command's output is held and paged when taller than the screen
    # (symfonic_cli/pager.py): the pager wraps the Environment's stdout, whoever made it.
    if environment is None:
        _whole_writes()
        environment = Environment()
    held = pager.hold(_command_words(args), environment, help_asked="--help" in args)
    code: object = None
    try:
        _main(args, environment)
    except SystemExit as exc:
        code = exc.code
        raise
    finally:
        if held is not None:
            # Ctrl-C while the pager ran: 130 once the pager has ended (pager.py); while the held
            # output is written to the terminal (--no-pager, or shorter than the screen): the same
            # ending as during the command.
            try:
                status = pager.release(held, environment, ok=code in (0, None))
            except KeyboardInterrupt:
                _interrupted(environment)
            if status:
                raise SystemExit(status)


def _whole_writes() -> None:
    """Under PYTHONUNBUFFERED (``python -u``, common in container images) sys.stdout writes straight
    to its file, and CPython drops what a pipe did not take of a write (a reader gone away: exit 0,
    the rest lost): a line-buffered writer of its own writes all or raises BrokenPipeError."""
    import io

    out = sys.stdout
    if isinstance(out, io.TextIOWrapper) and isinstance(out.buffer, io.FileIO):
        # The process's stdout for the rest of its life: never closed (the descriptor stays open).
        sys.stdout = open(out.buffer.fileno(), "w", buffering=1, encoding=out.encoding, errors=out.errors, closefd=False)


def _command_words(argv: list[str]) -> list[str]:
    """The command's words (``thread show``), skipping the root options before them."""
    group = _command_name(argv)
    if group is None:
        return []
    rest = argv[argv.index(group) + 1:]
    return [group, *rest[:1]]


def _main(args: list[str], environment: Environment) -> None:
    try:
        try:
            rv = _run(args, environment)
        except KeyboardInterrupt:
            raise  # not written out: a reader that does not read would hold the interruption up
        except BaseException:
            environment.stdout.flush()
            raise
        else:
            # Written out here, so that a reader gone away (| head) is seen, not lost at exit.
            environment.stdout.flush()
    except SymfonicError as exc:
        _traceback_if_debug(environment)  # --debug adds the traceback and keeps the exit code
        if not exc.message:  # the command already said why (e.g. erase's receipt)
            raise SystemExit(exc.exit_code) from None
        _fail(exc.line(), exc.exit_code, environment, page=True)
    except (KeyboardInterrupt, EOFError):
        _interrupted(environment)
    except BrokenPipeError:
        # The reader went away (| head): no traceback, no message, 128 + SIGPIPE as git and a
        # shell report it; what is still buffered goes nowhere (no second error at exit).
        _silence(environment.stdout)
        raise SystemExit(EXIT_BROKEN_PIPE) from None
    except SystemExit:
        raise
    except Exception as exc:
        click_exc = _click_exception(exc, environment)
        if click_exc is not None:
            code, message = click_exc
            if message:
                _fail(message, code, environment)
            raise SystemExit(code) from None
        _traceback_if_debug(environment)
        _fail(f"unexpected {type(exc).__name__}: {exc} (rerun with --debug for a traceback)", EXIT_UNEXPECTED, environment)
    else:
        raise SystemExit(rv if isinstance(rv, int) else 0)


def _traceback_if_debug(environment: Environment) -> None:
    """With --debug (or SYMFONIC_DEBUG), the traceback of the error being handled, on stderr."""
    if environment.debug or debug_enabled():
        import traceback

        environment.stderr.write(traceback.format_exc())


def _silence(stream: object) -> None:
    """Point ``stream``'s file descriptor at /dev/null, so that flushing it at exit cannot fail."""
    fileno = getattr(stream, "fileno", None)  # in-memory streams have none, or one that raises
    try:
        fd = fileno() if fileno is not None else None
    except (ValueError, OSError):
        return
    if not isinstance(fd, int):
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


def _click_exception(exc: Exception, environment: Environment):
    """Map click's own exceptions (bad options, aborted prompts) to exit codes and one line."""
    import click

    if isinstance(exc, click.exceptions.NoArgsIsHelpError) and exc.ctx is not None:
        # A bare group (symfonic, symfonic thread): its help, as --help prints it.
        environment.stdout.write(exc.ctx.get_help() + "\n")
        return 0, None
    if isinstance(exc, click.UsageError):
        hint = ""
        meant = _meant(exc)
        first = _command_first(exc)
        if first is not None:
            return EXIT_USAGE, first
        if meant is not None:
            hint = f" (did you mean '{meant}'?)"
        elif exc.ctx is not None:
            hint = f" (see '{exc.ctx.command_path} --help')"
        return EXIT_USAGE, f"{exc.format_message()}{hint}"
    if isinstance(exc, click.exceptions.Abort):
        return 1, "aborted"
    if isinstance(exc, click.ClickException):
        return exc.exit_code, exc.format_message()
    if isinstance(exc, click.exceptions.Exit):
        return exc.exit_code, None
    return None


def _command_first(exc: Exception) -> str | None:
    """For ``symfonic transcript --store demo.db KEY``: the group's commands that take the option,
    so the line names the missing word (``show``) rather than "No such option"."""
    import click

    ctx = getattr(exc, "ctx", None)
    if not isinstance(exc, click.NoSuchOption) or ctx is None or not isinstance(ctx.command, click.Group):
        return None
    takers = [name for name, cmd in ctx.command.commands.items()
              if not cmd.hidden and any(exc.option_name in p.opts for p in cmd.params)]
    if not takers:
        return None
    path, option = ctx.command_path, exc.option_name
    if len(takers) == 1:
        return f"'{path}' needs a command before {option}: did you mean '{path} {takers[0]} {option} ...'?"
    return f"'{path}' needs a command before {option}: one of {', '.join(takers)} (see '{path} --help')"


def _meant(exc: Exception) -> str | None:
    """For ``symfonic thread list`` (or ``threads show``): the command of that name in another
    group, the singular/plural twin first (``kubectl``'s and ``gh``'s habit of naming it)."""
    import re

    import click

    ctx = getattr(exc, "ctx", None)
    found = re.fullmatch(r"No such command '(.+)'\.", click.UsageError.format_message(exc)) if isinstance(exc, click.UsageError) else None
    if ctx is None or found is None or not isinstance(ctx.command, click.Group):
        return None
    word, here = found.group(1), ctx.info_name or ""
    root = _command_tree(None, False)
    groups = [(name, cmd) for name, cmd in getattr(root, "commands", {}).items()
              if name != here and isinstance(cmd, click.Group) and word in cmd.commands]
    # ``thread`` <-> ``threads`` first, then the groups in the root's order.
    groups.sort(key=lambda item: item[0].rstrip("s") != here.rstrip("s"))
    return f"symfonic {groups[0][0]} {word}" if groups else None
