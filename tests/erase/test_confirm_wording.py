"""Every changing command's confirmation and refusals name its own action (erase requests, sweeps,
prune; export and migrate never ask): on a real terminal at 80 and 120 columns, colour on and off,
and piped, where no one can be asked. A hostile key in a refusal is escaped."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.support.cli import run
from tests.support.terminal import Session

GOLDEN_STORE = Path(__file__).resolve().parent.parent / "goldens" / "changes" / "store.db"

# (command line after -s STORE, what is typed as the answer's question, action, past tense)
RUNS = [
    (["thread", "prune", "--all"], "Type the number of threads (8) to prune them: ", "prune", "pruned"),
    (["thread", "erase", "--thread", "globex:_:s-100"], "Type the thread key to erase it: ", "erase", "erased"),
    (["thread", "erase", "--inactive-since", "2999-01-01"], "Type the number of threads (8) to erase them: ", "erase", "erased"),
]


@pytest.fixture
def store(tmp_path) -> str:
    dest = tmp_path / "store.db"
    shutil.copyfile(GOLDEN_STORE, dest)
    return str(dest)


def _keys(url: str) -> list[tuple[str, int]]:
    import json

    r = run("threads", "list", "-s", url, "-f", "json")
    assert r.code == 0, r.err
    return sorted((t["key"], t["checkpoints"]) for t in json.loads(r.out))


@pytest.mark.parametrize("args,question,verb,done", RUNS)
def test_piped_refusal_names_the_action(store, args, question, verb, done):
    before = _keys(store)
    r = run(*args[:2], "-s", store, *args[2:])
    assert r.code == 6, r.err
    assert r.err == f"symfonic: error: not confirmed: no terminal to confirm on, nothing {done} (pass --yes to {verb} without a prompt)\n"
    assert _keys(store) == before


@pytest.mark.parametrize("cols", [80, 120])
@pytest.mark.parametrize("no_color", [False, True])
@pytest.mark.parametrize("args,question,verb,done", RUNS)
def test_terminal_question_and_refusal_name_the_action(store, tmp_path, args, question, verb, done, cols, no_color):
    before = _keys(store)
    env: dict[str, str | None] = {"NO_COLOR": "1"} if no_color else {}
    with Session([sys.executable, "-m", "symfonic_cli", *args[:2], "-s", store, *args[2:]], cols=cols, env=env) as s:
        s.read_until(question)
        s.send(b"not it\r")
        code = s.wait()
        screen = s.screen
        assert s.modes_restored()
    assert code == 6, screen
    assert "not confirmed: expected '" in screen and f"', nothing {done}" in screen, screen
    wrong = "prune" if verb == "erase" else "erase"
    assert f"to {wrong}" not in screen and "Traceback" not in screen and "\x1b[" not in screen.split(question)[1]
    assert _keys(store) == before


@pytest.mark.parametrize("cols", [80, 120])
def test_ctrl_c_at_the_prune_prompt_says_nothing_pruned(store, cols):
    before = _keys(store)
    with Session([sys.executable, "-m", "symfonic_cli", "thread", "prune", "-s", store, "--all"], cols=cols) as s:
        s.read_until("to prune them: ")
        s.send(b"\x03")
        code = s.wait()
        screen = s.screen
    assert code == 130, screen
    assert "not confirmed (interrupted), nothing pruned" in screen and "erase" not in screen and "Traceback" not in screen
    assert _keys(store) == before


def test_a_hostile_key_in_the_refusal_is_escaped(sqlite_store):
    from tests.erase.test_erase_trust import write_threads
    from tests.support import backends

    url = str(sqlite_store)
    key = "acme:_:\x1b[31mred\x07"
    write_threads(backends.get("sqlite"), url, [key])
    with Session([sys.executable, "-m", "symfonic_cli", "thread", "erase", "-s", url, "--thread", key]) as s:
        s.read_until("Type the thread key to erase it: ")
        s.send(b"no\r")
        code = s.wait()
        screen = s.screen
    assert code == 6, screen
    refusal = screen.split("Type the thread key to erase it: ")[1]
    assert "not confirmed: expected 'acme:_:\\x1b[31mred\\x07', nothing erased" in refusal, refusal
    assert "\x1b" not in refusal and "\x07" not in refusal


# The prompt in a process of its own, where the Ctrl-C is taken by another thread once the main one
# has waited 0.1 s for the answer: the signal is noted (as one landing just after Python last looked
# for signals and just before the read began is) and the main thread's wait is not interrupted by it.
# Under load that is how the Ctrl-C test above hung: the terminal drops the keys typed before it.
_SIGNAL_BESIDE_THE_READ = """
import signal, sys, threading, time
from symfonic_cli.api.runs import Confirmation
from symfonic_cli.cli.confirm import Terminal, confirm
from symfonic_cli.errors import StoppedError

def ctrl_c_while_waiting():
    main, asleep = threading.main_thread().native_id, 0
    while asleep < 5:  # the main thread blocked 0.1 s in a row
        time.sleep(0.02)
        with open(f"/proc/self/task/{main}/stat") as f:
            asleep = asleep + 1 if f.read().rsplit(")", 1)[1].split()[0] == "S" else 0
    signal.pthread_kill(threading.get_ident(), signal.SIGINT)

threading.Thread(target=ctrl_c_while_waiting, daemon=True).start()
try:
    confirm(Terminal(sys.stdin, sys.stderr), Confirmation(None, "prune", 8))
except StoppedError as exc:
    print(f"stopped: {exc.message}")
    sys.exit(exc.exit_code)
"""


def test_a_ctrl_c_landing_beside_the_read_ends_the_prompt():
    with Session([sys.executable, "-c", _SIGNAL_BESIDE_THE_READ]) as s:
        s.read_until("to prune them: ")
        code = s.wait(timeout=30)  # killed if the read goes on waiting for a line
        screen = s.screen
    assert code == 130, screen
    assert "stopped: not confirmed (interrupted), nothing pruned" in screen, screen
