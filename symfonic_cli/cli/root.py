"""The typer command tree: the root options and the command groups under them."""

from __future__ import annotations

from typing import Optional

import typer

from symfonic_cli.cli.groups import GROUP_EXTENSIONS, GROUPS
from symfonic_cli.cli.rootspec import help_of, opts
from symfonic_cli.vocabulary import COLOR_MODES
from symfonic_cli.cli.common import (
    AES_KEY_FILE_ENV,
    CONNECT_TIMEOUT_ENV,
    DEBUG_ENV,
    DEFAULT_CONNECT_TIMEOUT,
    MAX_CONNECT_TIMEOUT,
    MIN_CONNECT_TIMEOUT,
    ROOT_ENV,
    TZ_ENV,
    apply_root_options,
    environment,
    connect_timeout_in_range,
    connect_timeout_range,
    set_tz,
)


def _check_timeout(value: float) -> float:
    if not connect_timeout_in_range(value):  # nan and inf too, which click's FloatRange lets through
        raise typer.BadParameter(f"{value} is not in the range {connect_timeout_range()}.")
    return value


def _check_color(value: str) -> str:
    if value.lower() not in COLOR_MODES:
        raise typer.BadParameter(f"'{value}' is not one of {', '.join(COLOR_MODES)}.")
    environment().color = value.lower()
    return value.lower()


def _check_tz(value: Optional[str]) -> Optional[str]:
    if value is not None:
        set_tz(environment(), value)
    return value


def _completion_moved(ctx: typer.Context, param: typer.CallbackParam, value: bool) -> None:
    """typer's --install-completion and --show-completion wrote and printed other scripts than
    ``symfonic completion``: one installer now (issue #37); these say where it is (exit 2)."""
    if value:
        from symfonic_cli.errors import UsageError
        from symfonic_cli.vocabulary import SHELLS

        verb = "install" if param.name == "install_completion" else "show"
        raise UsageError(f"{(param.opts or ['?'])[0]} is 'symfonic completion {verb}' now",
                         hint=f"run: symfonic completion {verb} [{'|'.join(SHELLS)}]")


def _version(value: bool) -> None:
    if value:
        from symfonic_cli.versions import version_text

        typer.echo(version_text())
        raise typer.Exit()


def _root(
    debug: bool = typer.Option(False, *opts("debug"), help=help_of("debug"), envvar=DEBUG_ENV),
    version: bool = typer.Option(False, *opts("version"), callback=_version, is_eager=True, help=help_of("version")),
    connect_timeout: float = typer.Option(
        DEFAULT_CONNECT_TIMEOUT, *opts("connect_timeout"), min=MIN_CONNECT_TIMEOUT, max=MAX_CONNECT_TIMEOUT,
        envvar=CONNECT_TIMEOUT_ENV, callback=_check_timeout, help=help_of("connect_timeout"),
    ),
    pg_schema: Optional[str] = typer.Option(None, *opts("pg_schema"), envvar=ROOT_ENV["pg_schema"], help=help_of("pg_schema")),
    checkpoint_collection: Optional[str] = typer.Option(
        None, *opts("checkpoint_collection"), envvar=ROOT_ENV["checkpoint_collection"], help=help_of("checkpoint_collection")
    ),
    writes_collection: Optional[str] = typer.Option(
        None, *opts("writes_collection"), envvar=ROOT_ENV["writes_collection"], help=help_of("writes_collection")
    ),
    color: str = typer.Option(COLOR_MODES[0], *opts("color"), callback=_check_color, help=help_of("color")),  # [a|b|c]: helptext
    no_pager: bool = typer.Option(False, *opts("no_pager"), help=help_of("no_pager")),
    absolute_time: bool = typer.Option(False, *opts("absolute_time"), help=help_of("absolute_time")),
    aes_key_file: Optional[str] = typer.Option(
        None, *opts("aes_key_file"), envvar=AES_KEY_FILE_ENV, metavar="PATH", help=help_of("aes_key_file"),
    ),
    tz: Optional[str] = typer.Option(None, *opts("tz"), envvar=TZ_ENV, callback=_check_tz, metavar="ZONE", help=help_of("tz")),
    install_completion: bool = typer.Option(False, "--install-completion", hidden=True, is_eager=True, callback=_completion_moved),
    show_completion: bool = typer.Option(False, "--show-completion", hidden=True, is_eager=True, callback=_completion_moved),
) -> None:
    """Connection options go before the command: symfonic --connect-timeout 5 threads list ..."""
    environment().pager = not no_pager
    environment().absolute_time = absolute_time
    apply_root_options(
        environment(),
        debug=debug,
        connect_timeout=connect_timeout,
        pg_schema=pg_schema,
        checkpoint_collection=checkpoint_collection,
        writes_collection=writes_collection,
        aes_key_file=aes_key_file,
    )


def _placeholder() -> None:
    """Never run: the root is built this way only when no command is named."""


def build_app(only: str | None = None, *, summaries: bool = False) -> typer.Typer:
    """The root command with every group, or with just the group ``only`` (start-up speed).
    ``summaries``: each command and group only as its line in the root's help (``symfonic
    --help``), without importing them."""
    from importlib import import_module

    import typer.core

    # Plain click help: typer's rich help imports markdown and rich's console (~80 ms per start).
    typer.core.HAS_RICH = False
    root = typer.Typer(
        name="symfonic",
        help="Inspect, report on, erase and migrate the LangGraph checkpoint stores of symfonic-core agents.",
        no_args_is_help=True,
        add_completion=False,  # one installer: symfonic completion install (the root's old flags point to it)
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    root.callback()(_root)
    if summaries:
        from symfonic_cli.cli.groups import ROOT_COMMANDS, SUMMARIES

        for name in GROUPS:
            if name in ROOT_COMMANDS:
                root.command(name, help=SUMMARIES[name])(_placeholder)
            else:
                root.add_typer(typer.Typer(help=SUMMARIES[name], no_args_is_help=True), name=name)
        return root
    for name, module_name in GROUPS.items():
        if only is None or name == only:
            import_module(module_name).register(root)
            for extension in GROUP_EXTENSIONS.get(name, ()):
                import_module(extension)  # adds its commands to the group's app
    return root
