"""The typer option types shared by the command groups (``--store`` and ``--format`` built from
``optionspec.py``, as the quick route's are), and how a changing command runs through the API
(``changing``; its options: cli/declared.py, from the operation's declared parameters)."""

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


def changing(run: Any, given: dict[str, Any], *, report: Any = None, render: Any = None) -> None:
    """A changing command's run through the API (api/front.py): this command line's Front (its
    Environment, --store and config, the typed confirmation on this terminal: ``report``, by
    default cli/report.py's TextReport), then how it ended rendered (``render(call, format, env)``,
    by default cli/report.rendered)."""
    from symfonic_cli.api.front import Front, named_store
    from symfonic_cli.cli.common import check_format, environment, open_for_reading, store_options
    from symfonic_cli.cli.report import TextReport, rendered
    from symfonic_cli.location import resolve_store

    env = environment()
    store, fmt = given.pop("store", None), given.pop("fmt")
    out_format = check_format(fmt)

    def place(role: str = "store") -> tuple[Any, dict[str, Any]]:
        if role != "store":  # migrate's --from and --to: errors name the option
            location = named_store("--from" if role == "source" else "--to", resolve_store, given[role])
            return location, store_options(location, env)
        location = resolve_store(store)
        return location, {k: v for k, v in store_options(location, env).items() if k != "erase_extra"}

    front = Front(env, (report or TextReport)(env, out_format), True, place, lambda: open_for_reading(store, environment=env))
    (render or rendered)(lambda: run(front, given), out_format, env)
