"""Root options after the command name too: ``symfonic threads list --debug``.

Every command gets a copy of each root option (``--debug``, ``--connect-timeout``, ``--pg-schema``,
the MongoDB collections, ``--color``, ``--no-pager``), listed in its help. The root reads its
options (and their environment variables) first; a copy given after the command name overrides
them for this run.
"""

from __future__ import annotations

import copy
import weakref

import click
from click.core import ParameterSource

from symfonic_cli.cli.common import environment
from symfonic_cli.cli.rootspec import STORE_ONLY

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_SKIP = {"version", "install_completion", "show_completion", "help"}


def _apply(name: str, value: Any) -> None:
    if name == "debug":
        environment().debug = environment().debug or bool(value)
    elif name == "absolute_time":
        environment().absolute_time = environment().absolute_time or bool(value)
    elif name == "no_pager":
        environment().pager = environment().pager and not value
    elif name in ("connect_timeout", "pg_schema", "checkpoint_collection", "writes_collection"):
        environment().connection[name] = value
    elif name == "aes_key_file":
        from symfonic_cli.api.opening import use_key_file

        use_key_file(value)
    # color, tz: their own callbacks set them


# The root's options copied onto the commands (their help lists them under "Global options").
_GLOBAL_COPIES: weakref.WeakSet[click.Parameter] = weakref.WeakSet()


def _late_copy(param: click.Option) -> click.Option:
    late = copy.copy(param)
    late.expose_value = False
    late.envvar = None  # the root read the environment already
    late.show_envvar = False
    original = param.callback

    def callback(ctx: click.Context, p: click.Parameter, value: Any) -> Any:
        if ctx.get_parameter_source(p.name) != ParameterSource.COMMANDLINE:
            return value
        if original is not None:
            value = original(ctx, p, value)
        _apply(p.name, value)
        return value

    late.callback = callback
    return late


# Root options about reaching a store: not given to the commands that open none.
_STORE_ONLY = STORE_ONLY
_NO_STORE = {"demo", "completion"}


# A long command's own options in sections, by what a person decides with them (the rest under
# "Options"); keyed by the command's words. Names are the parameters' names.
_WHICH = ("store", "thread", "tenant", "sub_tenant", "session", "all_sessions", "from_file", "--all", "inactive_for",
          "inactive_since", "missing_ok")
_LIVE = ("lock_timeout", "wait", "max_duration", "pause", "max_rate", "max_replica_lag", "batch_size", "piece_size")
_OUTPUT = ("dry_run", "yes", "receipt", "operator", "ticket", "fmt", "format")
SECTIONS: dict[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]] = {
    ("thread", "prune"): (("Which threads", _WHICH), ("What to keep", ("keep", "older_than", "keep_branches", "compact")),
                          ("Live-database safety", _LIVE), ("Run and output", _OUTPUT)),
    ("thread", "erase"): (("Which threads", _WHICH), ("What to erase", ("grace", "vacuum")),
                          ("Live-database safety", _LIVE), ("Run and output", _OUTPUT)),
}


def _format_options(cmd: click.Command, ctx: click.Context, formatter: click.HelpFormatter) -> None:
    """Arguments once, the command's own options (in sections for a long command), then the root's
    copies by name only, once: 'symfonic --help' describes them."""
    arguments: list[tuple[str, str]] = []
    own: list[tuple[click.Parameter, tuple[str, str]]] = []
    shared: list[str] = []
    for param in cmd.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None:
            continue
        if isinstance(param, click.Argument):
            arguments.append(record)
        elif param in _GLOBAL_COPIES:
            shared.append(param.opts[-1] if isinstance(param, click.Option) else record[0])
        else:
            own.append((param, record))
    sections: list[tuple[str, list[tuple[str, str]]]] = [("Arguments", arguments)]
    placed: set[int] = set()
    for title, names in SECTIONS.get(tuple(ctx.command_path.split()[1:]), ()):
        chosen = [(p, r) for p, r in own if p.name in names or not set(p.opts).isdisjoint(names)]
        placed.update(id(p) for p, _ in chosen)
        sections.append((title, [r for _, r in chosen]))
    sections.append(("Options", [r for p, r in own if id(p) not in placed]))
    for title, records in sections:
        if records:
            with formatter.section(title):
                formatter.write_dl(records)
    if shared:
        with formatter.section("Global options"):
            # Whole option names a line (a wrap at a hyphen would split --writes-collection).
            words = [f"{o}," for o in shared[:-1]] + [shared[-1], "(before", "or", "after", "the", "command;",
                                                       "'symfonic", "--help'", "describes", "them)"]
            width = max(40, (formatter.width or 80) - formatter.current_indent)
            line = ""
            for word in words:
                if line and len(line) + 1 + len(word) > width:
                    formatter.write(" " * formatter.current_indent + line + "\n")
                    line = word
                else:
                    line = f"{line} {word}" if line else word
            formatter.write(" " * formatter.current_indent + line + "\n")


def everywhere(root: click.Command) -> None:
    """Give every command under ``root`` a copy of the root's options, listed in its help after
    the command's own under "Global options" (the store ones only where a store is opened)."""
    shared = [p for p in root.params if isinstance(p, click.Option) and p.name not in _SKIP]

    def visit(cmd: click.Command, path: tuple[str, ...]) -> None:
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                visit(sub, (*path, name))
            return  # a group's own options come before its command: the commands get them
        taken = {opt for p in cmd.params for opt in (*p.opts, *p.secondary_opts)}
        opens_store = not (set(path) & _NO_STORE)
        for p in shared:
            if taken.isdisjoint(p.opts) and (opens_store or p.name not in _STORE_ONLY):
                late = _late_copy(p)
                _GLOBAL_COPIES.add(late)
                cmd.params.append(late)

        def no_arguments(ctx: click.Context, formatter: click.HelpFormatter) -> None:
            pass

        def format_options(ctx: click.Context, formatter: click.HelpFormatter, cmd: click.Command = cmd) -> None:
            _format_options(cmd, ctx, formatter)

        # click >= 8.2 lists arguments itself ("Positional arguments"), typer again ("Arguments").
        cmd.format_arguments = no_arguments  # type: ignore[method-assign]  # this command's help only, not click's class
        cmd.format_options = format_options  # type: ignore[method-assign]  # this command's help only, not click's class

    visit(root, ())
