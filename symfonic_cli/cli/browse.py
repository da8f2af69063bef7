"""``symfonic browse``: the read-only terminal browser (``symfonic_cli/browse/``).

Textual is imported only here, when the command runs: ``symfonic --help`` and TAB never load it.
"""

from __future__ import annotations

import typer

from symfonic_cli.cli.options import StoreOpt
from symfonic_cli.vocabulary import GROUP_HELP

EPILOG = """Examples:

  symfonic browse --store demo.db

  symfonic browse --store prod --color never

Keys: Enter opens, / searches, f filters, o sorts, s state, h history, c compat, u usage,
t tool calls, r what a restart recalls, y copies the key, x shows the command for the view, ? every key, Esc back, q quits."""


def browse(store: StoreOpt = None) -> None:
    # The help: vocabulary.GROUP_HELP["browse"] (the root's help says the same).
    from symfonic_cli.cli.common import environment
    from symfonic_cli.errors import StoreError, UsageError
    from symfonic_cli.location import load_config

    env = environment()
    if not (env.stdin_isatty() and env.stdout_isatty()):
        raise UsageError("browse needs a terminal (standard input and output)",
                         hint="for a pipe or a script use threads list, transcript show or thread show")
    try:
        import textual  # noqa: F401 - a dependency; an environment without it is told how to add it
    except ImportError:
        raise StoreError("browse needs Textual, which is not installed", hint='pip install "textual>=8.2,<9"') from None
    from symfonic_cli.api.opening import open_reading as open_again
    from symfonic_cli.browse.source import FIRST_PAGE, Filters, Source
    from symfonic_cli.cli.common import open_reading

    # The second connection (the listing's later pages) says nothing on stderr: the first said it.
    source = Source(open_reading(store, env, parsed=False), store_arg=store,
                    reopen=lambda: open_again(store, env.connection, parsed=False))
    source.read_early(Filters(), FIRST_PAGE)  # while Textual is imported and started
    from symfonic_cli.browse.app import BrowseApp, keymap_from_config

    keymap = keymap_from_config(load_config())  # exit 2 on a wrong key: the early read is a daemon thread
    if env.color_wanted() is False:
        import os

        os.environ["NO_COLOR"] = "1"  # Textual reads it when the app is made: --color never as NO_COLOR
    app = BrowseApp(source, environment=env, keymap=keymap)
    try:
        app.run()
    finally:
        source.close()
    if app.failure is not None:
        raise app.failure  # after the terminal is restored: main() makes it one line (--debug: the traceback)


def register(root: typer.Typer) -> None:
    root.command("browse", help=GROUP_HELP["browse"], epilog=EPILOG)(browse)
