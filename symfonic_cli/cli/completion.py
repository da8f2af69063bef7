"""``symfonic completion install|show``: TAB completion for bash, zsh and fish."""

from __future__ import annotations

import os
from typing import Annotated, Optional

import typer

from symfonic_cli.errors import UsageError
from symfonic_cli.vocabulary import GROUP_HELP, SHELLS, listed, metavar

app = typer.Typer(help=GROUP_HELP["completion"], no_args_is_help=True)


def _shell(value: Optional[str]) -> str:
    chosen = (value or os.path.basename(os.environ.get("SHELL", ""))).lower()
    if chosen not in SHELLS:
        if value is None:
            raise UsageError("which shell?", hint=f"name it: symfonic completion install {'|'.join(SHELLS)}")
        raise UsageError(f"unknown shell '{value}'", hint=f"use one of: {listed(SHELLS)}")
    return chosen


ShellArg = Annotated[
    Optional[str],
    typer.Argument(metavar=metavar(SHELLS), help="The shell; default: the one in $SHELL.", show_default=False),
]


@app.command(
    "install",
    epilog="Examples:\n\n  symfonic completion install\n\n  symfonic completion install zsh\n\n  symfonic completion install fish",
)
def install(shell: ShellArg = None) -> None:
    """Write the completion script where the shell looks for it (and, for bash and zsh, one line in
    ~/.bashrc or ~/.zshrc); completion works in the next shell started."""
    from symfonic_cli.cli.common import environment
    from symfonic_cli.completions import install as do_install
    from symfonic_cli.render import escape_inline

    chosen = _shell(shell)
    out = environment().stdout
    for line in do_install(chosen):
        out.write(escape_inline(line) + "\n")
    out.write(f"{chosen} completion installed: start a new shell to use it\n")


@app.command("show", epilog="Examples:\n\n  symfonic completion show bash > ~/symfonic.bash\n\n  symfonic completion show fish")
def show(shell: ShellArg = None) -> None:
    """Print the completion script for a shell (to install it by hand)."""
    from symfonic_cli.cli.common import environment
    from symfonic_cli.completions import script

    environment().stdout.write(script(_shell(shell)))


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="completion")
