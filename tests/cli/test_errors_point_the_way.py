"""Issue #47, friction 2: errors a newcomer meets in the first hour point to what was meant, on the
real binary on a terminal at 80 and 120 columns (colour on and off): the missing command word
(``show``), where store names come from, a missing second checkpoint, an index past the end (still
an empty answer and exit 0), a session id for its full key, and one line for a missing export."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.support.cli import run
from tests.support.terminal import on_terminal

SETTINGS = {"80-colour": (80, {}), "120-no-colour": (120, {"NO_COLOR": "1"})}

@pytest.fixture(scope="module")
def demo(demo_master, tmp_path_factory):  # the module's own copy
    path = tmp_path_factory.mktemp("errors-demo") / "demo.db"
    shutil.copyfile(demo_master, path)
    return str(path)

def _on_terminal(setting: str, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    cols, colour = SETTINGS[setting]
    code, screen = on_terminal(*args, cols=cols, env={**colour, **(env or {})})
    assert "Traceback" not in screen, screen
    return code, " ".join(screen.split())  # wrapped lines joined: the words as a person reads them

@pytest.mark.parametrize("setting", SETTINGS)
def test_the_missing_command_word_is_named(setting, demo):
    code, shown = _on_terminal(setting, "transcript", "--store", demo, "acme:_:s-001")
    assert code == 2 and "did you mean 'symfonic transcript show --store ...'?" in shown, shown
    assert "No such option" not in shown
    code, shown = _on_terminal(setting, "thread", "--store", demo, "acme:_:s-001")
    assert code == 2 and "needs a command before --store: one of show, history, diff" in shown, shown
    # An option no command of the group takes is still click's own line.
    code, shown = _on_terminal(setting, "transcript", "--bogus")
    assert code == 2 and "No such option '--bogus'" in shown, shown

@pytest.mark.parametrize("setting", SETTINGS)
def test_a_word_that_is_no_file_names_the_config_file(setting, tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "SYMFONIC_CONFIG": "", "HOME": str(tmp_path)}
    code, shown = _on_terminal(setting, "transcript", "show", "--store", "prod", "acme:_:s-001", env=env)
    assert code == 4, shown
    assert "no store named 'prod'" in shown and "config.toml does not exist" in shown and "[stores]" in shown, shown

@pytest.mark.parametrize("setting", SETTINGS)
def test_thread_diff_with_one_checkpoint_says_the_second_is_missing(setting, demo):
    code, shown = _on_terminal(setting, "thread", "diff", "--store", demo, "acme:eu:s-003", "-2")
    assert code == 2 and "the second checkpoint is missing" in shown and "which thread" not in shown, shown
    assert "thread diff KEY -2 -1" in shown

@pytest.mark.parametrize("setting", SETTINGS)
def test_an_index_past_the_end_is_empty_and_says_how_many(setting, demo):
    code, shown = _on_terminal(setting, "transcript", "show", "--store", demo, "acme:_:s-001", "--index", "99", "-f", "json")
    assert code == 0 and "[]" in shown, shown
    assert "no message at index 99: the thread has 9 messages (--index 0 to 8, or -9 to -1)" in shown, shown
    # In a pipe: stdout the same empty answer, the note on stderr.
    piped = run("transcript", "show", "--store", demo, "acme:_:s-001", "--index", "99", "-f", "json")
    assert piped.code == 0 and json.loads(piped.out) == [] and "the thread has 9 messages" in piped.err

@pytest.mark.parametrize("setting", SETTINGS)
def test_a_session_id_alone_suggests_its_key(setting, demo):
    code, shown = _on_terminal(setting, "thread", "show", "--store", demo, "s-001")
    assert code == 3 and "did you mean: 'acme:_:s-001'" in shown, shown

@pytest.mark.parametrize("setting", SETTINGS)
def test_exporting_a_missing_key_is_one_error_line(setting, demo, tmp_path):
    code, shown = _on_terminal(setting, "thread", "export", "--store", demo, "acme:_:s-999", "--output", str(tmp_path / "x.zip"))
    assert code == 3 and shown.count("symfonic:") == 1 and "no thread 'acme:_:s-999'" in shown, shown
    assert "did you mean: 'acme:_:s-001'" in shown and not (tmp_path / "x.zip").exists()
