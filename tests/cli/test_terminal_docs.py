"""Every documented command where a person runs it: each ``symfonic`` line of README.md and of every
page in docs/guide/ (read from the pages at test time), in order, run by the real ``symfonic``
binary on a real pseudo-terminal, at 80 columns with colour and at 120 columns with NO_COLOR=1,
tall output going through a pager that passes the text through. Each line ends with the exit code
its page documents (0, or its ``# exit N`` comment) and the terminal's modes as they were, and
shows no traceback and no ``unexpected`` error. A line whose comment says ``# interactive`` is
started on the terminal, left to draw its screen, sent ``q``, and must end with 0.

A page's lines run in one shell on one terminal (a fresh folder each), so the cost is the
commands' own; the pages are separate tests, parallel-safe."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.docpages import GUIDES, README, command_lines, interactive, prepare
from tests.support.terminal import lines_on_terminal, shell_environment

PAGES = [README, *GUIDES]
SETTINGS = {"80-colour": (80, {}), "120-no-colour": (120, {"NO_COLOR": "1"})}
# A pager that passes the text through, so what was paged is on the screen to judge.
PAGER = "cat -"


@pytest.fixture(scope="module")
def demo_store(demo_master) -> Path:  # each test copies it
    return demo_master


def _failures(page: Path, folder: Path, cols: int, env: dict[str, str]) -> list[str]:
    lines = command_lines(page)
    runs = lines_on_terminal([line for line, _ in lines], cwd=str(folder), cols=cols,
                             env=shell_environment(folder.parent / "home", {"PAGER": PAGER, **env}),
                             interactive={n for n, (line, _) in enumerate(lines) if interactive(line)})
    failures = []
    for (line, expected), run in zip(lines, runs):
        if run.code != (0 if interactive(line) else expected):
            failures.append(f"exit {run.code} (expected {expected}): {run!r}")
        if not run.restored:
            failures.append(f"the terminal's modes changed: {run!r}")
        if "Traceback" in run.shown or "unexpected" in run.shown:
            failures.append(f"an error: {run!r}")
        if "NO_COLOR" in env and not interactive(line) and "\x1b" in run.shown:
            failures.append(f"an escape sequence under NO_COLOR: {run!r}")
    return failures


@pytest.mark.parametrize("setting", SETTINGS, ids=list(SETTINGS))
@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_documented_lines_on_a_terminal(page, setting, tmp_path, demo_store):
    cols, env = SETTINGS[setting]
    assert command_lines(page), f"{page.name} has no symfonic command line"
    folder = tmp_path / "run"
    folder.mkdir()
    (tmp_path / "home").mkdir()
    prepare(page, folder, demo_store)
    assert _failures(page, folder, cols, env) == []


def test_the_harness_reports_codes_modes_and_interactive_lines(tmp_path):
    # The harness itself: a failing line's code is read, a changed terminal is seen (and put
    # back), and an interactive line is sent `q`.
    page = tmp_path / "page.md"
    page.write_text("```bash\nsymfonic --version\nsymfonic threads list --store nothing.db  # exit 3\n"
                    "stty -echo; symfonic --version\nread -n 1 key; [ \"$key\" = q ] && symfonic --version  # interactive\n```\n",
                    encoding="utf-8")
    folder = tmp_path / "run"
    folder.mkdir()
    (tmp_path / "home").mkdir()
    failures = _failures(page, folder, 80, {})
    assert len(failures) == 2, failures
    assert failures[0].startswith("exit 4 (expected 3)") and "nothing.db" in failures[0]
    assert failures[1].startswith("the terminal's modes changed") and "stty -echo" in failures[1]
