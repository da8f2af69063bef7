"""Root options after the command name too: ``symfonic threads list --debug``.

Every command gets a copy of each root option (``--debug``, ``--connect-timeout``, ``--pg-schema``,
the MongoDB collections, ``--color``, ``--no-pager``), listed in its help. The root reads its
options (and their environment variables) first; a copy given after the command name overrides
them for this run.
"""

from __future__ import annotations

import copy

import click
from click.core import ParameterSource

from symfonic_cli.cli.common import environment

_SKIP = {"version", "install_completion", "show_completion", "help"}


def _apply(name: str, value) -> None:
    if name == "debug":
        environment().debug = environment().debug or bool(value)
    elif name == "no_pager":
        environment().pager = environment().pager and not value
    elif name in ("connect_timeout", "pg_schema", "checkpoint_collection", "writes_collection"):
        environment().connection[name] = value
    elif name == "aes_key_file":
        from symfonic_cli.codec import cipher

        cipher.configure(value)
    # color, tz: their own callbacks set them


def _late_copy(param: click.Option) -> click.Option:
    late = copy.copy(param)
    late.expose_value = False
    late.envvar = None  # the root read the environment already
    late.show_envvar = False
    original = param.callback

    def callback(ctx: click.Context, p: click.Parameter, value):
        if ctx.get_parameter_source(p.name) != ParameterSource.COMMANDLINE:
            return value
        if original is not None:
            value = original(ctx, p, value)
        _apply(p.name, value)
        return value

    late.callback = callback
    return late


def everywhere(root: click.Group) -> None:
    """Give every command under ``root`` a copy of the root's options."""
    shared = [p for p in root.params if isinstance(p, click.Option) and p.name not in _SKIP]

    def visit(cmd: click.Command) -> None:
        if isinstance(cmd, click.Group):
            for sub in cmd.commands.values():
                visit(sub)
        if isinstance(cmd, click.Group):
            return  # a group's own options come before its command: the commands get them
        taken = {opt for p in cmd.params for opt in (*p.opts, *p.secondary_opts)}
        for p in shared:
            if taken.isdisjoint(p.opts):
                cmd.params.append(_late_copy(p))

    visit(root)
