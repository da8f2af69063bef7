"""Shell completion scripts, generated from the app: ``python -m symfonic_cli.completions [DIR]``."""

from __future__ import annotations

import sys
from pathlib import Path

SHELLS = {"bash": "symfonic.bash", "zsh": "_symfonic", "fish": "symfonic.fish"}


def script(shell: str) -> str:
    from typer._completion_classes import completion_init
    from typer._completion_shared import get_completion_script

    import symfonic_cli.cli.root  # noqa: F401  (typer registers its completion classes)

    completion_init()
    return get_completion_script(prog_name="symfonic", complete_var="_SYMFONIC_COMPLETE", shell=shell).rstrip("\n") + "\n"


def write_all(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for shell, name in SHELLS.items():
        path = folder / name
        path.write_text(script(shell))
        written.append(path)
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "completions"
    for p in write_all(target):
        print(p)
