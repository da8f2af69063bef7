"""The documentation's command lines, read at test time: README's tour and every guide page, each
``symfonic`` line of their bash blocks with the exit code its comment documents, and the folder a
page's lines run in (a fresh demo store unless the page makes its own).
``tests/project/test_docs.py`` runs them on pipes, ``tests/cli/test_terminal_docs.py`` on a real
pseudo-terminal."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
GUIDES = sorted((ROOT / "docs" / "guide").glob("*.md"))
EXPECT = re.compile(r"#\s*exit (\d+)\s*$")
# A line for a command a person uses with the keyboard (a full-screen view): started on a terminal,
# drawn, left with `q` (docs/testing.md).
INTERACTIVE = re.compile(r"#\s*interactive\b")
# A line whose comment quotes what it shows (`# shows "I can refund 42 EUR"`): the story the page
# tells leads to the output that holds it (a guide that reads the wrong thread fails).
SHOWS = re.compile(r'#.*\bshows "([^"]+)"')


def command_lines(path: Path) -> list[tuple[str, int]]:
    """Each ``symfonic`` line of the page's bash blocks, with the exit code its comment expects
    (``# exit 3``; 0 when none). Lines joined by a trailing backslash count as one."""
    lines: list[tuple[str, int]] = []
    for block in re.findall(r"```bash\n(.*?)```", path.read_text(encoding="utf-8"), re.S):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            line = line.strip()
            if not line.startswith("symfonic ") and " symfonic " not in f" {line}":
                continue
            if line.startswith(("python", "pip")):
                continue  # install lines of the fresh-machine commands
            match = EXPECT.search(line)
            lines.append((line, int(match.group(1)) if match else 0))
    return lines


def interactive(line: str) -> bool:
    return bool(INTERACTIVE.search(line))


def shown_text(line: str) -> str | None:
    """The text a line's ``# shows "..."`` comment promises its output holds; None when it has none."""
    match = SHOWS.search(line)
    return match.group(1) if match else None


def prepare(page: Path, folder: Path, demo_store: Path) -> None:
    """The folder a page's lines run in: a copy of the demo store unless the page makes its own
    (the encrypted-stores guide makes its store and key with ``symfonic demo --encrypted``). A
    page that shows rewind's guard against a thread written in the last 5 minutes (``# exit 14``)
    gets a store written just now, as its reader has: the session's may be older than that."""
    lines = command_lines(page)
    if any("symfonic demo" in line for line, _ in lines):
        return
    if any(code == 14 for _, code in lines):
        from symfonic_cli.demo import create_demo_store

        create_demo_store(folder / "demo.db")
        return
    shutil.copyfile(demo_store, folder / "demo.db")
