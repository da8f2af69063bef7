"""Shell completion scripts (bash, zsh, fish) and their installation.

The scripts call ``symfonic`` with ``_SYMFONIC_COMPLETE`` set; ``symfonic_cli/complete.py`` answers
without importing typer. ``python -m symfonic_cli.completions [DIR]`` writes them to
``completions/`` (a test checks that folder is current).
"""

from __future__ import annotations

import os
import shlex
import sys

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from symfonic_cli.errors import FileAccessError

SHELLS = {"bash": "symfonic.bash", "zsh": "_symfonic", "fish": "symfonic.fish"}

_SCRIPTS = {
    "bash": """\
# symfonic completion for bash: source this file, or install it with `symfonic completion install bash`.
_symfonic_completion() {
    local IFS=$'\\n'
    COMPREPLY=( $( env COMP_WORDS="${COMP_WORDS[*]}" \\
                   COMP_CWORD=$COMP_CWORD \\
                   COMP_LINE="$COMP_LINE" COMP_POINT=$COMP_POINT \\
                   COMP_WORDBREAKS="$COMP_WORDBREAKS" \\
                   _SYMFONIC_COMPLETE=complete_bash $1 2>/dev/null ) )
    return 0
}

complete -o default -F _symfonic_completion symfonic
""",
    "zsh": """\
#compdef symfonic
# symfonic completion for zsh: put this file on $fpath, or run `symfonic completion install zsh`.

_symfonic_completion() {
  eval $(env _TYPER_COMPLETE_ARGS="${words[1,$CURRENT]}" _SYMFONIC_COMPLETE=complete_zsh symfonic 2>/dev/null)
}

compdef _symfonic_completion symfonic
""",
    "fish": """\
# symfonic completion for fish: installed by `symfonic completion install fish`.
complete --command symfonic --no-files --arguments "(env _SYMFONIC_COMPLETE=complete_fish _TYPER_COMPLETE_FISH_ACTION=get-args _TYPER_COMPLETE_ARGS=(commandline -cp) symfonic 2>/dev/null)" --condition "env _SYMFONIC_COMPLETE=complete_fish _TYPER_COMPLETE_FISH_ACTION=is-args _TYPER_COMPLETE_ARGS=(commandline -cp) symfonic 2>/dev/null"
""",
}


def script(shell: str) -> str:
    return _SCRIPTS[shell]


def write_all(folder: str | os.PathLike[str]) -> list[Path]:
    from pathlib import Path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for shell, name in SHELLS.items():
        path = folder / name
        path.write_text(script(shell))
        written.append(path)
    return written


def _home() -> str:
    return os.path.expanduser("~")


def _data_home() -> str:
    return os.environ.get("XDG_DATA_HOME") or os.path.join(_home(), ".local", "share")


def _config_home() -> str:
    return os.environ.get("XDG_CONFIG_HOME") or os.path.join(_home(), ".config")


def install_paths(shell: str) -> tuple[str, str | None, str | None]:
    """(script file, start-up file to add a line to or None, that line)."""
    if shell == "bash":
        target = os.path.join(_data_home(), "bash-completion", "completions", "symfonic")
        # bash-completion loads that folder on demand; the line covers a bash without it.
        quoted = shlex.quote(target)
        return target, os.path.join(_home(), ".bashrc"), f"[ -f {quoted} ] && . {quoted}  # symfonic completion"
    if shell == "zsh":
        folder = os.path.join(_home(), ".zfunc")
        line = f"fpath+=({shlex.quote(folder)}); autoload -Uz compinit && compinit  # symfonic completion"
        return os.path.join(folder, "_symfonic"), os.path.join(_home(), ".zshrc"), line
    return os.path.join(_config_home(), "fish", "completions", "symfonic.fish"), None, None


def install(shell: str) -> list[str]:
    """Write the script where the shell finds it (and the start-up line once); what was done.
    A file that cannot be written is exit 4, naming it; a start-up file in another encoding is
    read and appended to as bytes."""
    target, rc, line = install_paths(shell)
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(script(shell))
    except OSError as exc:
        raise _cannot("write", exc.filename or target, exc) from None
    done = [f"wrote {target}"]
    if rc is not None and line is not None:  # both or neither (install_paths)
        wanted = line.encode("utf-8")
        try:
            with open(rc, "rb") as fh:
                present = wanted in fh.read()
        except FileNotFoundError:
            present = False
        except OSError as exc:
            raise _cannot("read", rc, exc) from None
        if not present:
            try:
                with open(rc, "ab") as fh:
                    fh.write(b"\n" + wanted + b"\n")
            except OSError as exc:
                raise _cannot("write", rc, exc) from None
            done.append(f"added to {rc}: {line}")
    from symfonic_cli.complete import load_tree

    load_tree(rebuild=True)  # the first TAB is as quick as the next
    return done


def _cannot(verb: str, path: str | bytes, exc: OSError) -> FileAccessError:
    from symfonic_cli.errors import FileAccessError

    return FileAccessError(f"cannot {verb} {os.fsdecode(path)}: {exc.strerror or exc}", hint="completion was not installed")


if __name__ == "__main__":
    from pathlib import Path

    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "completions"
    for p in write_all(target):
        print(p)
