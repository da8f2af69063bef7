"""Streamed retention sweeps on every store kind: --batch-size, Ctrl-C and rerun, progress on a
terminal. Threads are written by the real agent graph with LangGraph's clock moved back
(tests/support/old_threads.py); interrupts go to a real subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support.cli import run
from tests.support.old_threads import write_aged

DAY = timedelta(days=1)
# Keys of several scripts and cases: pages are cut by key in the store's binary order.
IDLE = {
    "acme:_:ancient": 400 * DAY,
    "acme:eu:old": 120 * DAY,
    "acme:_:Zeta": 200 * DAY,
    "acme:_:straße": 150 * DAY,
    "acme:_:\U0001f600": 95 * DAY,
    "globex:_:old": 100 * DAY,
    "globex:eu:older": 300 * DAY,
}
ACTIVE = {"acme:_:today": timedelta(0), "acme:_:month": 30 * DAY, "globex:_:week": 7 * DAY}


def _store(backend) -> str:
    url = backend.new_store(scenarios=False)
    write_aged(backend, url, {**IDLE, **ACTIVE}, turns=1)
    return url


def checkpoints_of(backend, url: str, key: str) -> int:
    with backend.saver(url) as saver:
        return len(list(saver.list({"configurable": {"thread_id": key}})))


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _subprocess_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYMFONIC_") or k.startswith(("SYMFONIC_TEST_", "SYMFONIC_REQUIRE_"))}
    return {**env, **extra}


@pytest.mark.parametrize("batch", ["1", "3"])
def test_batches_erase_exactly_the_idle_threads(any_kind, batch, tmp_path):
    url = _store(any_kind)
    receipt = tmp_path / "erase.jsonl"
    r = run("thread", "erase", "-s", url, "--inactive-for", "90d", "--batch-size", batch, "--yes", "-f", "json", "--receipt", str(receipt))
    assert r.code == 0, r.err
    doc = json.loads(r.out)  # one complete document, its threads streamed
    assert sorted(t["key"] for t in doc["threads"]) == sorted(IDLE)
    assert all(t["status"] == "erased" for t in doc["threads"])
    # Each key once, in the store's key order, across pages.
    keys = [t["key"] for t in doc["threads"]]
    assert len(set(keys)) == len(keys) == len(IDLE)
    assert doc["summary"]["planned"] == len(IDLE) and doc["summary"]["erased"] == len(IDLE)
    assert doc["interrupted"] is False and "stopped" not in doc
    for key in IDLE:
        assert checkpoints_of(any_kind, url, key) == 0, key
    for key in ACTIVE:
        assert checkpoints_of(any_kind, url, key) > 0, key
    lines = records(receipt)
    assert [rec["record"] for rec in lines] == ["start"] + ["thread"] * len(IDLE) + ["end"]
    start, end = lines[0], lines[-1]
    assert start["threads_planned"] == len(IDLE) and start["batch_size"] == int(batch)
    assert start["selection"]["cut_off"] == doc["selection"]["cut_off"]
    assert end["summary"]["erased"] == len(IDLE) and end["interrupted"] is False
    assert [rec["key"] for rec in lines[1:-1]] == keys


def test_jsonl_gives_the_receipt_records_and_the_plan_is_counted(any_kind, tmp_path):
    url = _store(any_kind)
    dry = run("thread", "erase", "-s", url, "--inactive-for", "90d", "--tenant", "acme", "--batch-size", "2", "--dry-run", "-f", "jsonl")
    assert dry.code == 0, dry.err
    lines = [json.loads(x) for x in dry.out.splitlines()]
    assert [x["record"] for x in lines] == ["start"] + ["plan"] * 5 + ["end"]
    assert lines[-1]["summary"]["threads"] == 5
    text = run("thread", "erase", "-s", url, "--inactive-for", "90d", "--batch-size", "2", "--dry-run", "-f", "text")
    assert f"{len(IDLE)} thread(s) idle for 90d (last activity before" in text.out and "in batches of 2" in text.out
    r = run("thread", "erase", "-s", url, "--inactive-for", "90d", "--tenant", "globex", "--yes", "-f", "jsonl")
    assert r.code == 0, r.err
    lines = [json.loads(x) for x in r.out.splitlines()]
    assert [x["record"] for x in lines] == ["start", "thread", "thread", "end"]
    assert {x["key"] for x in lines[1:3]} == {"globex:_:old", "globex:eu:older"}
    assert len({x["receipt_id"] for x in lines}) == 1
    # Without a terminal and without --yes: the plan (count and first keys), nothing deleted.
    r = run("thread", "erase", "-s", url, "--inactive-for", "90d", "--batch-size", "2", "-f", "text")
    assert r.code == 6 and "5 thread(s) idle for 90d (last activity before" in r.out and "in batches of 2" in r.out
    assert checkpoints_of(any_kind, url, "acme:_:ancient") > 0


@pytest.mark.parametrize("value", ["0", "-1", "100001", "99999999999999999999999", "nan", "ten"])
def test_batch_size_out_of_range_is_a_usage_error(sqlite_store, value, tmp_path):
    before = sqlite_store.read_bytes()
    for command in (["thread", "erase", "--yes"], ["thread", "export", "-o", str(tmp_path / "b.zip")]):
        r = run(*command, "-s", str(sqlite_store), "--inactive-for", "1d", "--batch-size", value)
        assert r.code == 2 and ("1<=x<=100000" in r.err or "not a valid integer" in r.err), r.err
        assert "Traceback" not in r.err and r.out == ""
    assert sqlite_store.read_bytes() == before
    assert not (tmp_path / "b.zip").exists()


def test_batch_size_goes_with_a_sweep(sqlite_store, tmp_path):
    r = run("thread", "erase", "-s", str(sqlite_store), "--thread", "acme:_:s-001", "--batch-size", "5", "--yes")
    assert r.code == 2 and "--batch-size goes with a retention sweep" in r.err
    r = run("thread", "export", "-s", str(sqlite_store), "--thread", "acme:_:s-001", "--batch-size", "5", "-o", str(tmp_path / "x"))
    assert r.code == 2 and "--batch-size goes with a retention sweep" in r.err
    # The ends of the range are taken.
    assert run("thread", "erase", "-s", str(sqlite_store), "--inactive-for", "36500d", "--batch-size", "100000", "--yes").code == 0
    assert run("thread", "erase", "-s", str(sqlite_store), "--inactive-for", "36500d", "--batch-size", "1", "--yes").code == 0


def _interruptible() -> None:
    # A child inherits an ignored SIGINT (the suite may run as a background job): an operator's
    # terminal delivers it, so the child gets the default disposition back.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for(predicate, proc, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert proc.poll() is None, f"the process ended before {what}: {proc.returncode}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _thread_records(path: Path) -> int:
    if not path.exists():
        return 0
    return sum(1 for line in path.read_text().splitlines() if '"record": "thread"' in line or '"record":"thread"' in line)


def test_interrupted_sweep_stops_between_threads_and_a_rerun_finishes(any_kind, tmp_path):
    url = _store(any_kind)
    receipt = tmp_path / "erase.jsonl"
    argv = [sys.executable, "-m", "symfonic_cli", "thread", "erase", "-s", url, "--inactive-for", "90d",
            "--batch-size", "3", "--yes", "-f", "json", "--receipt", str(receipt)]
    proc = subprocess.Popen(argv, env=_subprocess_env(SYMFONIC_FAULT_SLOW_THREAD="0.6"), preexec_fn=_interruptible,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: _thread_records(receipt) >= 2, proc, "two thread records")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    doc = json.loads(out)  # still one complete document
    assert doc["interrupted"] is True and "run the same command again" in doc["stopped"]
    lines = records(receipt)
    assert lines[0]["record"] == "start" and lines[-1]["record"] == "end"
    assert lines[-1]["interrupted"] is True
    threads = [rec for rec in lines if rec["record"] == "thread"]
    assert 2 <= len(threads) < len(IDLE)
    # Stopped after the thread in flight: every thread it touched committed whole and is recorded.
    assert all(t["status"] == "erased" for t in threads)
    assert [t["key"] for t in threads] == [t["key"] for t in doc["threads"]]
    assert lines[-1]["summary"]["erased"] == len(threads)
    assert lines[-1]["summary"]["not_attempted"] == len(IDLE) - len(threads)
    erased = {t["key"] for t in threads}
    for key in IDLE:
        assert (checkpoints_of(any_kind, url, key) == 0) == (key in erased), key
    past = receipt.read_bytes()

    # The same command again: the erased threads are no longer selected, the rest go.
    again = subprocess.run(argv, env=_subprocess_env(), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.err
    second = json.loads(again.stdout)
    assert {t["key"] for t in second["threads"]} == set(IDLE) - erased
    assert receipt.read_bytes().startswith(past)  # appended: no past record lost or rewritten
    lines = records(receipt)
    assert [rec["record"] for rec in lines].count("start") == 2 and lines[-1]["record"] == "end"
    assert {rec["key"] for rec in lines if rec["record"] == "thread" and rec["status"] == "erased"} == set(IDLE)
    for key in IDLE:
        assert checkpoints_of(any_kind, url, key) == 0, key
    for key in ACTIVE:
        assert checkpoints_of(any_kind, url, key) > 0, key


def _on_a_terminal(argv: list[str], *, tty: bool) -> tuple[int, str, str]:
    """Run with stderr on a pseudo-terminal (or a pipe); stdout is a pipe either way."""
    import pty

    if not tty:  # no progress to watch: no thread slowed down
        p = subprocess.run(argv, env=_subprocess_env(), capture_output=True, text=True, timeout=300)
        return p.returncode, p.stdout, p.stderr
    master, slave = pty.openpty()
    # Slowed a little so the run lasts a few redraws; the first thread's line is drawn at once.
    proc = subprocess.Popen(argv, env=_subprocess_env(SYMFONIC_FAULT_SLOW_THREAD="0.05"),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the terminal's last writer is gone
            break
        if not chunk:
            break
        seen += chunk
    out = proc.stdout.read().decode("utf-8")
    proc.wait(timeout=60)
    os.close(master)
    return proc.returncode, out, seen.decode("utf-8", "replace")


@pytest.mark.parametrize("tty", [True, False])
def test_progress_on_a_terminal_only(any_kind, tty, tmp_path):
    url = _store(any_kind)
    n = len(IDLE)
    bundle = tmp_path / "idle.zip"
    code, out, err = _on_a_terminal(
        [sys.executable, "-m", "symfonic_cli", "thread", "export", "-s", url, "--inactive-for", "90d", "--batch-size", "2", "-o", str(bundle), "-f", "json"],
        tty=tty)
    assert code == 0, err
    assert json.loads(out)["threads"] == n
    assert (f"exported {n}/{n} threads" in err) == tty, err
    code, out, err = _on_a_terminal(
        [sys.executable, "-m", "symfonic_cli", "thread", "erase", "-s", url, "--inactive-for", "90d", "--batch-size", "2", "--yes", "-f", "json"],
        tty=tty)
    assert code == 0, err
    assert json.loads(out)["summary"]["erased"] == n  # stdout holds the document alone
    assert (f"erased {n}/{n} threads, " in err) == tty, err
    assert "\x1b" not in err  # rewritten with \r and spaces: no escape sequence, NO_COLOR or not
    assert ("\r" in err) == tty
    if tty:
        assert "erased 1/" in err or "erased 2/" in err  # drawn while it ran, not only at the end


@pytest.mark.parametrize("suffix", ["", ".tar.gz"])
def test_interrupted_export_leaves_no_bundle(sqlite_kind, suffix, tmp_path):
    url = _store(sqlite_kind)
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / f"idle{suffix}"
    argv = [sys.executable, "-m", "symfonic_cli", "thread", "export", "-s", url, "--inactive-for", "90d", "--batch-size", "2", "-o", str(target)]
    proc = subprocess.Popen(argv, env=_subprocess_env(SYMFONIC_FAULT_SLOW_THREAD="1"), preexec_fn=_interruptible,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: any(p.name.startswith(".idle") for p in folder.iterdir()), proc, "the partial bundle")
        time.sleep(1.5)  # a thread or two written into it
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert list(folder.iterdir()) == []  # neither the bundle nor its partial
    # The same command again writes the whole bundle.
    assert subprocess.run(argv, env=_subprocess_env(), capture_output=True, timeout=300).returncode == 0
    assert target.exists()


def test_export_in_batches_equals_one_page(aged_kind_store, tmp_path):
    backend, url = aged_kind_store
    manifests = []
    for batch in ("1", "100000"):
        out = tmp_path / f"b{batch}"
        r = run("thread", "export", "-s", url, "--inactive-for", "90d", "--batch-size", batch, "-o", str(out))
        assert r.code == 0, r.err
        manifest = json.loads((out / "manifest.json").read_text())
        for t in manifest["threads"]:
            assert (out / t["file"]).read_bytes() == run("transcript", "show", "-s", url, "-t", t["key"], "-f", "json").out.encode("utf-8")
        manifests.append([(t["key"], t["file"], t["sha256"], t["rows"]) for t in manifest["threads"]])
    assert manifests[0] == manifests[1]
    assert sorted(k for k, *_ in manifests[0]) == sorted(IDLE)


@pytest.fixture
def sqlite_kind(request):
    from tests.conftest import backend_for

    return backend_for("sqlite", request)


_aged: dict[str, str] = {}


@pytest.fixture
def aged_kind_store(any_kind):
    if any_kind.kind not in _aged:
        _aged[any_kind.kind] = _store(any_kind)
    return any_kind, _aged[any_kind.kind]



@pytest.fixture(params=["sqlite-utf8", "sqlite-utf16le", "sqlite-utf16be", "postgres-c", "postgres-icu", "mongodb"])
def encoded_store(request, tmp_path):
    """tests/erase/test_erase_exact.py's stores of tenant keys and near misses, in every encoding and collation."""
    from tests.erase import test_erase_exact as exact

    kind = request.param
    if kind.startswith("sqlite"):
        return "sqlite", exact._sqlite_store(tmp_path, {"sqlite-utf8": "UTF-8", "sqlite-utf16le": "UTF-16le", "sqlite-utf16be": "UTF-16be"}[kind])
    if kind.startswith("postgres"):
        return "postgres", exact._postgres_store(request, kind == "postgres-icu")
    return "mongodb", exact._mongo_store(request)


def test_pages_in_every_encoding_and_collation(encoded_store):
    """Keyset pages of one key each over stores whose text compares in UTF-16 code units (SQLite
    UTF-16), under an ICU collation (PostgreSQL) or as BSON strings: every key once, none missed,
    the tenant's prefix exact. ``--inactive-for 0s``: every thread written before the command."""
    from tests.erase.test_erase_exact import ALL, INSIDE, _saved_keys

    kind, url = encoded_store
    r = run("thread", "erase", "-s", url, "--inactive-for", "0s", "--tenant", "acme", "--batch-size", "1", "--yes", "-f", "json")
    assert r.code == 0, r.err
    swept = [t["key"] for t in json.loads(r.out)["threads"]]
    assert sorted(swept) == sorted(INSIDE) and len(swept) == len(set(swept))
    assert _saved_keys(kind, url) == set(ALL) - set(INSIDE)
    r = run("thread", "erase", "-s", url, "--inactive-for", "0s", "--batch-size", "2", "--yes", "-f", "json")
    assert r.code == 0, r.err
    assert sorted(t["key"] for t in json.loads(r.out)["threads"]) == sorted(set(ALL) - set(INSIDE))
    assert _saved_keys(kind, url) == set()



def test_an_ignored_sigint_stays_ignored(sqlite_kind, tmp_path):
    """Started with SIGINT ignored (a script's background job, nohup): the sweep keeps it ignored."""
    url = _store(sqlite_kind)
    receipt = tmp_path / "erase.jsonl"
    argv = [sys.executable, "-m", "symfonic_cli", "thread", "erase", "-s", url, "--inactive-for", "90d", "--yes", "--receipt", str(receipt)]
    proc = subprocess.Popen(argv, env=_subprocess_env(SYMFONIC_FAULT_SLOW_THREAD="0.1"),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: _thread_records(receipt) >= 1, proc, "a thread record")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert records(receipt)[-1]["summary"]["erased"] == len(IDLE)
