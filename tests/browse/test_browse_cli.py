"""``symfonic browse`` as a person starts it: the real binary on a pseudo-terminal (keys pressed,
the screen read, ``q`` quits and the terminal is left as it was found), without a terminal
(one line, exit 2), and the keys the config file rebinds."""

from __future__ import annotations

import re
import shutil
import sys
import time

import pytest

from symfonic_cli.errors import UsageError
from tests.support.cli import run
from tests.support.terminal import Session

CSI = re.compile(r"\x1b\[[0-9;?<>=$]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


@pytest.fixture(scope="module")
def demo(demo_master, tmp_path_factory):  # the module's own copy
    path = tmp_path_factory.mktemp("browse-cli") / "demo.db"
    shutil.copyfile(demo_master, path)
    return path


def test_without_a_terminal_it_says_so_and_exits_2(demo):
    r = run("browse", "--store", str(demo))
    assert r.code == 2 and r.out == ""
    assert r.err.count("\n") == 1 and "browse needs a terminal" in r.err and "Traceback" not in r.err


def test_a_missing_store_is_one_line_and_exit_4_before_any_screen(tmp_path):
    code, screen, restored, _ = _drive(["browse", "--store", str(tmp_path / "none.db")], [])
    assert code == 4 and "\x1b[?1049h" not in screen and restored
    assert CSI.sub("", screen).strip().count("\n") == 0 and "no SQLite file" in screen


def test_keys_from_the_config_file():
    from symfonic_cli.browse.app import binding_ids, keymap_from_config

    assert {"quit", "back", "help", "copy", "command", "tools", "history", "diff", "mark", "search", "filter"} <= binding_ids()
    assert keymap_from_config({}) == {}
    assert keymap_from_config({"browse": {"keys": {"quit": "Q, ctrl+q", "history": "H"}}}) == {"quit": "Q,ctrl+q", "history": "H"}
    for bad in ({"browse": []}, {"browse": {"keys": 3}}, {"browse": {"keys": {"launch": "l"}}},
                {"browse": {"keys": {"quit": ""}}}, {"browse": {"keys": {"quit": 7}}}, {"browse": {"keys": {"quit": "q,,x"}}}):
        with pytest.raises(UsageError):
            keymap_from_config(bad)


def test_a_bad_key_in_the_config_file_is_exit_2_on_one_line(demo, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[browse.keys]\nlaunch = "l\\u001b[2J"\n', encoding="utf-8")
    code, screen, _, _ = _drive(["browse", "--store", str(demo)], [], env={"SYMFONIC_CONFIG": str(config)})
    assert code == 2
    assert "[browse.keys] has no key 'launch'" in screen and "\x1b[2J" not in screen and "Traceback" not in screen


def _drive(args: list[str], steps: list[tuple[str, bytes]], *, cols: int = 80, rows: int = 24,
           env: dict[str, str | None] | None = None, timeout: float = 60) -> tuple[int, str, bool, list[str]]:
    """Run ``symfonic ARGS`` on a new pseudo-terminal (``Session``); for each step wait until the
    screen shows its text, then type its bytes. (exit code, everything written, whether the
    terminal's modes are as before, the steps whose text appeared)."""
    environ: dict[str, str | None] = {"SYMFONIC_STORE": None, "TERM": "xterm-256color", **(env or {})}
    with Session([sys.executable, "-m", "symfonic_cli", *args], cols=cols, rows=rows, env=environ) as s:
        since = 0  # each step's text is looked for in what was written after the step before
        done: list[str] = []
        deadline = time.monotonic() + timeout
        for wanted, keys in steps:
            if not _shows(s, wanted, since, deadline):
                break
            done.append(wanted)
            since = len(s.seen)
            time.sleep(0.2)
            s.send(keys)
        code = s.wait(timeout=max(1.0, deadline - time.monotonic()) + 10)
        return code, s.seen.decode("utf-8", "replace"), s.modes_restored(), done


def _shows(s: Session, wanted: str, since: int, deadline: float) -> bool:
    """Read until what was written after ``since`` shows ``wanted`` (escape sequences aside)."""
    while wanted not in CSI.sub("", s.seen[since:].decode("utf-8", "replace")):
        if time.monotonic() > deadline or (not s.read_some(0.1) and not s.running()):
            return False
    return True


@pytest.mark.parametrize("cols,rows", [(80, 24), (120, 40)])
@pytest.mark.parametrize("mode", ["colour", "NO_COLOR", "--color never"])
def test_the_real_binary_on_a_terminal(demo, cols, rows, mode):
    steps = [
        ("acme:_:s-001", b"s"),  # the listing is up: the first thread's state
        ("RuntimeError", b"\x1b"),  # its error shown; Esc back
        ("8 threads", b"/"),  # search
        ("search message content", b"kettle\r"),
        ("3 matching messages", b"\r"),  # open the hit
        ("transcript acme:eu:s-040", b"q"),
    ]
    env = {"NO_COLOR": "1"} if mode == "NO_COLOR" else {}
    root = ["--color", "never"] if mode == "--color never" else []
    no_color = mode != "colour"
    code, screen, restored, done = _drive([*root, "browse", "--store", str(demo)], steps, cols=cols, rows=rows, env=env)
    text = CSI.sub("", screen)
    assert code == 0, text[-2000:]
    assert done == [wanted for wanted, _ in steps], text[-2000:]
    assert "Is the blue kettle back in stock?" in text and "Traceback" not in text
    # The terminal as it was found: the alternate screen left, the tty's modes (raw mode) restored.
    assert screen.rfind("\x1b[?1049h") < screen.rfind("\x1b[?1049l")
    assert restored
    # NO_COLOR: Textual draws in shades of grey only (its monochrome filter); otherwise in colour.
    colours = set(re.findall(r"[34]8;(5;\d+|2;\d+;\d+;\d+)", screen))
    assert colours
    assert all(_grey(c) for c in colours) is no_color, colours


def _grey(code: str) -> bool:
    """An SGR colour (``5;N`` of the 256, ``2;R;G;B``) that is black, white or a grey."""
    parts = [int(p) for p in code.split(";")[1:]]
    if len(parts) == 3:
        return parts[0] == parts[1] == parts[2]
    return parts[0] in (0, 7, 8, 15, 16, 231) or parts[0] >= 232



def test_an_encrypted_store_with_the_key_file_on_a_terminal(request, tmp_path):
    """The key as every command takes it (``--aes-key-file``): the search reads the decrypted
    messages, Enter shows the hit's transcript, q quits; the key is never on the screen."""
    from tests.browse.test_browse_encrypted_delta import _store
    from tests.conftest import backend_for
    from tests.transcript.test_encrypted import KEY

    url = _store(backend_for("sqlite", request), encrypted=True)
    key_file = tmp_path / "aes.key"
    key_file.write_bytes(KEY.encode())
    key_file.chmod(0o600)
    steps = [("delta:_:", b"/"), ("search message content", b"after the removal\r"),
             ("2 matching messages", b"\r"), ("transcript delta:_:remove", b"q")]
    code, screen, restored, done = _drive(["--aes-key-file", str(key_file), "browse", "--store", url], steps,
                                          env={"LANGGRAPH_AES_KEY": None})
    text = CSI.sub("", screen)
    assert code == 0 and done == [wanted for wanted, _ in steps], text[-2000:]
    assert "echo: after the removal" in text and KEY not in text and "Traceback" not in text
    assert restored
