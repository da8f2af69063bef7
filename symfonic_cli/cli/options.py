"""The typer option types shared by the command groups (``--store`` and ``--format`` built from
``optionspec.py``, as the quick route's are), and a changing command's Front for the API
(``command_front``; its options: cli/declared.py, from the operation's declared parameters)."""

from __future__ import annotations

from typing import Annotated, Any, List, Optional

import typer

from symfonic_cli.cli import optionspec
from symfonic_cli.cli.common import MAX_COUNT

_TYPES = {"text": Optional[str], "count": Optional[int], "multi": Optional[List[str]], "flag": bool}


def option_info(spec: dict[str, Any]) -> Any:
    """The ``typer.Option`` of one entry of ``optionspec`` (the quick route parses the same entry)."""
    extra: dict[str, Any] = {}
    if spec.get("kind", "text") == "count":
        extra.update(min=0, max=MAX_COUNT)
    if "env" in spec:
        extra.update(envvar=spec["env"], show_envvar=True)
    return typer.Option(*spec["opts"], help=spec["help"], **extra)


def typer_option(spec: dict[str, Any]) -> Any:
    """The typer option type (``Annotated[type, typer.Option]``) of one entry of ``optionspec``."""
    return Annotated[_TYPES[spec.get("kind", "text")], option_info(spec)]


def typer_options(specs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Parameter name -> ``typer.Option``, for a command's table in ``optionspec``: a command writes
    ``Annotated[<type of the entry's kind>, OPTIONS[name]]``, so that the type checker sees the type."""
    return {name: option_info(spec) for name, spec in specs.items()}


StoreOpt = typer_option(optionspec.STORE)
# A list, so that a repeated --thread is seen: a command of one thread refuses it (the last one
# silently winning would read or change another thread than the operator named first).
ThreadOpt = Annotated[Optional[list[str]], typer.Option("--thread", "-t", help="Thread key tenant:sub:session.")]
ThreadsOpt = Annotated[Optional[list[str]], typer.Option("--thread", "-t", help="Thread key tenant:sub:session (repeat for several).")]
# The key as a command's first argument too (``gh issue view 123``, ``kubectl describe pod X``):
# every command of one thread takes it, and ``with_key`` joins it to --thread once for all of them.
KeyArg = Annotated[
    Optional[str],
    typer.Argument(metavar="[KEY]", show_default=False),  # its help: cli/helptext.py
]
TenantOpt = Annotated[Optional[str], typer.Option("--tenant", help="Tenant id (derives the key with --session).")]
SubTenantOpt = Annotated[Optional[str], typer.Option("--sub-tenant", help="Sub-tenant id ('_' in the key when absent).")]
SessionOpt = Annotated[Optional[str], typer.Option("--session", help="Session id (derives the key with --tenant).")]
FormatOpt = typer_option(optionspec.FORMAT)
RecordFormatOpt = typer_option(optionspec.RECORD_FORMAT)  # the record commands: csv too
def with_key(key: str | None, thread: list[str] | None) -> list[str] | None:
    """The --thread list with the KEY argument in it: the key is given once, as the argument or as
    --thread, never both (exit 2). The key is kept exactly as typed."""
    if key is None:
        return thread
    if thread:
        from symfonic_cli.errors import UsageError

        raise UsageError("the thread key is given twice (as KEY and as --thread)", hint="give one of them")
    return [key]


def command_front(fmt: str | None, *, report: Any = None) -> Any:
    """This command line's Front (api/front.py) for a changing command: its Environment and root
    options, the Report that renders the run's events in ``--format`` and asks the typed
    confirmation on this terminal (``report``: by default cli/report.py's TextReport)."""
    from symfonic_cli.api.front import Front
    from symfonic_cli.cli.common import check_format, environment
    from symfonic_cli.cli.report import TextReport

    env = environment()
    return Front(env, (report or TextReport)(env, check_format(fmt)), True, env.connection)
