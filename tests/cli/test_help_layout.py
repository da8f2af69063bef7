"""Issue #47, friction 1: help a newcomer can read on a 24-row terminal, on the real binary on a
pseudo-terminal at 80 and 120 columns (colour on and off). ``symfonic --help`` shows a three-line
quick start and every command within the first screen, the global options once, after them; the
``thread`` entry names its commands; a long command's help (``thread prune``) is grouped (which
threads / what to keep / live-database safety / run and output), names the global options in a
few lines instead of describing them again, and is paged on a terminal (never in a pipe)."""

from __future__ import annotations

import re

import pytest

from tests.support.cli import run_process
from tests.support.terminal import on_terminal

SETTINGS = {"80-colour": (80, {}), "120-no-colour": (120, {"NO_COLOR": "1"})}
# A pager that marks each line it shows: what reached the screen through it is told apart.
MARKING_PAGER = "sed -e 's/^/paged| /'"
COMMANDS = ("transcript", "threads", "thread", "browse", "store", "compat", "migrate", "mcp", "demo", "completion")
SGR = re.compile(r"\x1b\[[0-9;]*m")


def _screen(setting: str, *args: str, rows: int = 24) -> str:
    cols, env = SETTINGS[setting]
    code, screen = on_terminal(*args, cols=cols, rows=rows, env={**env, "SYMFONIC_PAGER": MARKING_PAGER})
    assert code == 0 and "Traceback" not in screen, screen
    return SGR.sub("", screen)


@pytest.mark.parametrize("setting", SETTINGS)
def test_the_root_help_shows_the_commands_on_the_first_screen(setting):
    screen = _screen(setting, "--help")
    lines = [line.removeprefix("paged| ") for line in screen.splitlines()]
    first = "\n".join(lines[:23])  # what a 24-row terminal shows above the pager's prompt
    assert "Quick start:" in first and "symfonic demo demo.db" in first
    assert "symfonic transcript show --store demo.db acme:eu:s-003" in first
    listed = [line.split()[0] for line in first.split("Commands:", 1)[1].splitlines() if line.startswith("  ") and not line.startswith("   ")]
    assert tuple(listed) == COMMANDS, first
    rest = "\n".join(lines)
    assert rest.count("Global options") == 1 and rest.index("--debug") > rest.index("  completion ")
    thread = " ".join(rest.split("  thread ", 1)[1].split("  browse ", 1)[0].split())
    assert "every command is listed below" not in rest
    from symfonic_cli import complete

    commands = complete.build_tree()["commands"]["thread"]["commands"]  # every command of the group, a new one too
    assert len(commands) >= 7 and all(re.search(rf"\b{name}\b", thread) for name in commands), thread


@pytest.mark.parametrize("setting", SETTINGS)
def test_prune_help_is_grouped_short_and_paged(setting):
    screen = _screen(setting, "thread", "prune", "--help")
    lines = screen.splitlines()
    assert lines and all(line.startswith("paged|") for line in lines if line.strip()), screen[:400]  # through the pager
    text = "\n".join(line.removeprefix("paged| ").removeprefix("paged|") for line in lines)
    headings = ["Examples:", "Which threads:", "What to keep:", "Live-database safety:", "Run and output:", "Global options:"]
    where = [text.find(h) for h in headings]
    assert -1 not in where and where == sorted(where), list(zip(headings, where))
    sections = {h: text[text.find("\n" + h):] for h in headings}
    assert "--keep " in sections["What to keep:"].split("\n\n")[0] and "--compact" in sections["What to keep:"].split("\n\n")[0]
    assert "--lock-timeout" in sections["Live-database safety:"].split("\n\n")[0]
    assert "--tenant" in sections["Which threads:"].split("\n\n")[0] and "--all " in sections["Which threads:"].split("\n\n")[0]
    glob = sections["Global options:"].strip().splitlines()
    assert 2 <= len(glob) <= 5 and "--aes-key-file" in sections["Global options:"] and "symfonic --help" in sections["Global options:"]
    assert "LANGGRAPH_AES_KEY" not in text  # described once, in the root's help
    assert len(text.strip().splitlines()) <= 110


def test_help_in_a_pipe_is_not_paged_and_says_the_same():
    piped = run_process("thread", "prune", "--help", env={"SYMFONIC_PAGER": MARKING_PAGER, "COLUMNS": "80"})
    assert piped.code == 0 and "paged|" not in piped.out
    assert "Which threads:" in piped.out and "Live-database safety:" in piped.out
