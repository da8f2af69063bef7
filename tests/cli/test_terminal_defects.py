"""Issue #34's defects, where a person meets them: ``threads search`` on a terminal and ``-f table``
on a pipe, Ctrl-C inside the built-in pager (a real ``less`` on a pseudo-terminal that is the
command's controlling terminal), a reader that goes away (``| head -1`` through real pipes),
``--debug`` keeping each error's exit code, and ``compat report``'s exit 5 after its paged report."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from symfonic_cli import errors
from tests.support.cli import run, run_process
from tests.support.terminal import Session, on_terminal

SYMFONIC = [sys.executable, "-m", "symfonic_cli"]
LONG = "acme:_:long"
SEARCHED = "order 1042"
ESC = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _plain(screen: str) -> str:
    return ESC.sub("", screen)


def _sane(screen: str) -> None:
    assert "Traceback" not in screen and "unexpected" not in screen, screen[-3000:]


@pytest.fixture(scope="module")
def big_store(tmp_path_factory) -> Path:
    """Real graphs through the real SqliteSaver: 300 threads with long session names (the listing
    is over 64 KiB, more than a pipe holds) and one long thread of long messages (its transcript
    too)."""
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver

    from tests.support.scenarios import agent_graph

    path = tmp_path_factory.mktemp("big") / "big.db"
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        graph = agent_graph().compile(checkpointer=SqliteSaver(conn))
        for i in range(300):
            session = f"s-{i:04d}-" + "session-name-" * 9
            graph.invoke({"messages": [HumanMessage(content=f"hello {i}")]}, {"configurable": {"thread_id": f"acme:_:{session}"}})
        for i in range(40):
            text = f"long question {i} " + "word " * 400
            graph.invoke({"messages": [HumanMessage(content=text)]}, {"configurable": {"thread_id": LONG}})
    finally:
        conn.close()
    return path


# 1. threads search crashed on every terminal, and with -f table on a pipe.

@pytest.mark.parametrize("fmt", [None, "table", "json", "jsonl", "text"])
@pytest.mark.parametrize("cols,colour", [(80, True), (120, False)])
def test_threads_search_on_a_terminal(sqlite_store, fmt, cols, colour):
    args = ["threads", "search", "--store", str(sqlite_store), SEARCHED] + (["-f", fmt] if fmt else [])
    code, screen = on_terminal(*args, cols=cols, rows=200, env=None if colour else {"NO_COLOR": "1"})
    assert code == 0, screen
    _sane(screen)
    if not colour:
        assert "\x1b" not in screen
    text = _plain(screen)
    assert "acme:_:s-001" in text
    if fmt == "json":
        assert {r["key"] for r in json.loads(text)} >= {"acme:_:s-001"}
    elif fmt == "jsonl":
        assert all(json.loads(line)["key"] for line in text.splitlines() if line.strip())
    elif fmt != "text":
        assert max(len(line) for line in text.splitlines()) <= cols


def test_threads_search_table_on_a_pipe(sqlite_store):
    inside = run("threads", "search", "--store", str(sqlite_store), SEARCHED, "-f", "table")
    assert inside.code == 0, inside.err
    assert "acme:_:s-001" in inside.out and "snippet" in inside.out
    piped = run_process("threads", "search", "--store", str(sqlite_store), SEARCHED, "-f", "table")
    assert piped.code == 0, piped.err
    assert "acme:_:s-001" in piped.out and "\x1b" not in piped.out


# 2. Ctrl-C inside the pager: the pager's alone; the command waits, gives the terminal back, 130.

def test_ctrl_c_in_less_waits_for_it_and_exits_130(big_store):
    with Session([*SYMFONIC, "transcript", "show", "--store", str(big_store), "--thread", LONG], cols=80, rows=24) as s:
        s.read_until("long question 0")
        s.settle()
        assert s.running(), s.screen  # less is showing the first page
        s.send(b"\x03")
        s.settle()
        assert s.running(), s.screen  # less ignores Ctrl-C at its prompt, and the command waits for it
        s.send(b"q")
        code = s.wait()
        assert code == errors.EXIT_INTERRUPTED, s.screen[-2000:]
        _sane(s.screen)
        assert s.left_running() == []
        assert s.modes_restored()


def test_ctrl_c_ending_the_pager_exits_130(big_store):
    # A pager that Ctrl-C ends (its shell and sleep take the default action): no traceback, 130.
    pager = "cat > /dev/null; echo pager-running; sleep 30"
    with Session([*SYMFONIC, "transcript", "show", "--store", str(big_store), "--thread", LONG], cols=80, rows=24,
                 env={"SYMFONIC_PAGER": pager}) as s:
        s.read_until("pager-running")
        _until_running(s, "sleep 30")  # Ctrl-C while the pager runs its command, as a person would
        s.send(b"\x03")
        code = s.wait(timeout=20)
        assert code == errors.EXIT_INTERRUPTED, s.screen[-2000:]
        _sane(s.screen)
        assert s.left_running() == []
        assert s.modes_restored()


def _until_running(session: Session, args: str, timeout: float = 10) -> None:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        listed = subprocess.run(["ps", "-o", "args=", "-s", str(session.proc.pid)], capture_output=True, text=True).stdout
        if any(line.strip() == args for line in listed.splitlines()):
            return
        time.sleep(0.05)
    raise AssertionError(f"{args!r} never ran in the session")


# 3. A reader gone away: 141 (128 + SIGPIPE), silently, on both routes.

def _piped_to_head(args: list[str], cwd: Path, *, unbuffered: bool = False) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "SYMFONIC_DEBUG")}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    script = '"$PY" -m symfonic_cli "$@" | head -1; exit "${PIPESTATUS[0]}"'
    return subprocess.run(["bash", "-c", script, "bash", *args], cwd=cwd, env=dict(env, PY=sys.executable),
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args", [
    ["threads", "list", "--store", "big.db", "--wide"],
    ["threads", "list", "--store", "big.db", "-f", "jsonl"],
    ["threads", "list", "--store", "big.db", "-f", "json", "--limit", "1000"],  # the typer route
    ["transcript", "show", "--store", "big.db", "--thread", LONG],
    ["transcript", "show", "--store", "big.db", "--thread", LONG, "-f", "json"],
    ["threads", "search", "--store", "big.db", "hello", "--tenant", "acme", "-f", "jsonl"],  # 300 threads: over 64 KiB
], ids=["list", "list-jsonl", "list-json-typer", "transcript", "transcript-json", "search-jsonl"])
def test_closed_pipe_exits_141_silently(big_store, args):
    whole = subprocess.run([*SYMFONIC, *args], cwd=big_store.parent, capture_output=True, timeout=120)
    assert len(whole.stdout) > 65536 + 16384  # more than a pipe and head's read hold: the writer meets the closed end
    done = _piped_to_head(args, big_store.parent)
    assert done.stdout.count("\n") == 1 and done.stdout.strip()
    assert done.returncode == errors.EXIT_BROKEN_PIPE == 141, done.stderr
    assert done.stderr == ""


@pytest.mark.parametrize("args", [
    ["threads", "list", "--store", "big.db", "-f", "json"],
    ["transcript", "show", "--store", "big.db", "--thread", LONG, "-f", "json", "--no-pager"],
], ids=["list-json", "transcript-json"])
def test_closed_pipe_exits_141_under_pythonunbuffered(big_store, args):
    # python -u (PYTHONUNBUFFERED, common in container images): CPython dropped what the pipe did
    # not take of one large write, and the command ended 0 with its document cut.
    done = _piped_to_head(args, big_store.parent, unbuffered=True)
    assert done.returncode == errors.EXIT_BROKEN_PIPE, done.stderr
    assert done.stderr == ""


def test_whole_documents_under_pythonunbuffered(big_store):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    done = subprocess.run([*SYMFONIC, "threads", "list", "--store", str(big_store), "-f", "json"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and len(json.loads(done.stdout)) == 301


def test_closed_pipe_is_documented():
    table = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "exit-codes.md").read_text(encoding="utf-8")
    assert re.search(r"^\| 141 \|.*\| head", table, re.M), "141 is in the exit-code table"
    assert not re.search(r"^\| 1 \|.*head", table, re.M), "a closed pipe is not exit 1"


# 4. --debug adds the traceback and keeps the exit code.

@pytest.fixture(scope="module")
def encrypted_store(tmp_path_factory, sqlite_master) -> tuple[Path, Path]:
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
    from langgraph.checkpoint.sqlite import SqliteSaver

    from tests.support.backends import copy_store

    folder = tmp_path_factory.mktemp("encrypted")
    src = sqlite3.connect(sqlite_master, check_same_thread=False)
    dst = sqlite3.connect(folder / "encrypted.db", check_same_thread=False)
    target = SqliteSaver(dst, serde=EncryptedSerializer.from_pycryptodome_aes(key=b"k" * 32))
    target.setup()
    copy_store(SqliteSaver(src), target)
    src.close()
    dst.close()
    wrong = folder / "wrong.key"
    wrong.write_bytes(b"w" * 32)
    wrong.chmod(0o600)
    return folder / "encrypted.db", wrong


def _errors(store: str, encrypted: tuple[Path, Path], tmp_path: Path) -> list[tuple[list[str], int]]:
    db, wrong = encrypted
    return [
        (["--aes-key-file", str(wrong), "transcript", "show", "-s", str(db), "-t", "acme:_:s-001"], errors.EXIT_STORE),
        (["transcript", "show", "-s", store, "-t", "acme:_:nobody"], errors.EXIT_NOT_FOUND),
        (["threads", "list", "-s", str(tmp_path / "missing.db")], errors.EXIT_STORE),
        (["threads", "list", "-s", store, "--sort", "nope"], errors.EXIT_USAGE),
        (["transcript", "show", "-s", store, "-t", "acme:_:s-001", "--index", "x"], errors.EXIT_USAGE),
        (["compat", "report", "-s", store, "--fail-on", "legacy"], errors.EXIT_FINDINGS),
        (["thread", "erase", "-s", store, "-t", "acme:_:s-001"], errors.EXIT_NOT_CONFIRMED),
        (["thread", "diff", "-s", store, "-t", "acme:_:s-001", "nope", "-1"], errors.EXIT_NOT_FOUND),
    ]


def test_debug_keeps_every_exit_code(sqlite_store, encrypted_store, tmp_path):
    for args, expected in _errors(str(sqlite_store), encrypted_store, tmp_path):
        plain = run(*args)
        assert plain.code == expected, (args, plain.err)
        assert "Traceback" not in plain.err
        for debug in (["--debug"], []):
            env = {} if debug else {"SYMFONIC_DEBUG": "1"}
            shown = run(*debug, *args, env=env)
            assert shown.code == expected, (debug, args, shown.err)
            assert shown.err.rstrip().splitlines()[-1] == plain.err.rstrip().splitlines()[-1], shown.err
            if expected != errors.EXIT_USAGE:  # click's own usage errors have no traceback to add
                assert "Traceback (most recent call last)" in shown.err, (args, shown.err)


def test_debug_keeps_the_exit_code_in_a_process(encrypted_store):
    db, wrong = encrypted_store
    args = ["--aes-key-file", str(wrong), "transcript", "show", "-s", str(db), "-t", "acme:_:s-001"]
    done = run_process("--debug", *args)
    assert done.code == errors.EXIT_STORE, done.err
    assert "Traceback" in done.err and done.err.rstrip().splitlines()[-1].startswith("symfonic: error: the key does not decrypt")


# 5. compat report whose gate exits 5: the report is paged, the exit-5 line comes after, last.

def test_failing_compat_gate_pages_its_report_then_says_why(sqlite_store):
    args = ["compat", "report", "--store", str(sqlite_store), "--by-thread", "--fail-on", "legacy"]
    code, screen = on_terminal(*args, cols=100, rows=10, env={"SYMFONIC_PAGER": "sed 's/^/paged| /'", "NO_COLOR": "1"})
    assert code == errors.EXIT_FINDINGS, screen
    lines = [line for line in _plain(screen).splitlines() if line.strip()]
    assert len(lines) > 10 and all(line.startswith("paged| ") for line in lines[:-1]), screen
    assert lines[-1].startswith("symfonic: error: compat report: findings named by --fail-on present"), lines[-1]


def test_failing_compat_gate_in_less_says_why_after_it_closes(sqlite_store):
    args = [*SYMFONIC, "compat", "report", "--store", str(sqlite_store), "--by-thread", "--fail-on", "legacy"]
    with Session(args, cols=100, rows=10) as s:
        s.read_until("acme:")
        s.settle()
        assert s.running() and "findings named" not in s.screen, s.screen
        s.send(b"q")
        code = s.wait()
        assert code == errors.EXIT_FINDINGS, s.screen
        after_pager = _plain(s.screen).rsplit("\n", 3)
        assert "findings named by --fail-on present" in "\n".join(after_pager[-3:]), s.screen[-1500:]
        assert s.left_running() == [] and s.modes_restored()


# Found by the terminal pass: Ctrl-C while SQLite runs threads search's byte test (a Python
# function inside the query) was "SQLite error ...: user-defined function raised exception", exit 4.

def test_ctrl_c_inside_the_sqlite_search_is_an_interruption(sqlite_store):
    import signal

    from symfonic_cli.location import parse_location
    from symfonic_cli.search.prefilter import Prefilter
    from symfonic_cli.stores import open_store

    class CtrlCInside(Prefilter):
        def may_match(self, payload_type, blob, *, whole_checkpoint: bool) -> bool:
            signal.raise_signal(signal.SIGINT)  # a real SIGINT, delivered while SQLite runs the query
            return super().may_match(payload_type, blob, whole_checkpoint=whole_checkpoint)

    with open_store(parse_location(str(sqlite_store))) as st, pytest.raises(KeyboardInterrupt):
        list(st.search_candidates(CtrlCInside("order", case_sensitive=False, tools=False)))
    with open_store(parse_location(str(sqlite_store))) as st:  # the same search, left alone, answers
        assert "acme:_:s-001" in list(st.search_candidates(Prefilter("order", case_sensitive=False, tools=False)))
