"""Issue #47, friction 4: words on the screen named for what they show, on the real binary on a
terminal at 80 and 120 columns (colour on and off): the transcript's time column says ``age`` over
ages and ``time`` over instants (--absolute-time), never ``timestamp``; ``migrate --dry-run`` sums
up what a copy would do, not "copied"."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.support.terminal import on_terminal

SETTINGS = {"80-colour": (80, {}), "120-no-colour": (120, {"NO_COLOR": "1"})}
SGR = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def demo(demo_master, tmp_path_factory):  # the module's own copy
    path = tmp_path_factory.mktemp("words-demo") / "demo.db"
    shutil.copyfile(demo_master, path)
    return str(path)


def _screen(setting: str, *args: str) -> str:
    cols, env = SETTINGS[setting]
    code, screen = on_terminal(*args, cols=cols, env=env)
    assert code == 0 and "Traceback" not in screen, screen
    return SGR.sub("", screen)


@pytest.mark.parametrize("setting", SETTINGS)
def test_the_transcripts_time_column_is_named_for_what_it_shows(setting, demo):
    ages = _screen(setting, "transcript", "show", "--store", demo, "acme:eu:s-003")
    header = next(line for line in ages.splitlines() if "role" in line and "content" in line)
    assert re.search(r"\bage\b", header) and "timestamp" not in header, header
    instants = _screen(setting, "--absolute-time", "transcript", "show", "--store", demo, "acme:eu:s-003")
    header = next(line for line in instants.splitlines() if "role" in line and "content" in line)
    assert re.search(r"\btime\b", header) and "timestamp" not in header, header
    assert re.search(r"\d{4}-\d\d-\d\dT", instants)


@pytest.mark.parametrize("setting", SETTINGS)
def test_a_migrate_dry_run_says_what_it_would_copy(setting, demo, tmp_path):
    shown = _screen(setting, "migrate", "--from", demo, "--to", str(tmp_path / "copy.db"), "--all", "--dry-run", "--init-target")
    words = " ".join(shown.split())
    assert "dry run, nothing written: threads 8, would copy 8" in words, shown
    assert "copied 8" not in words and not (tmp_path / "copy.db").exists()
