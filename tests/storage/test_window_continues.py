"""A night job's window that continues (issue #44 item 8). ``thread prune --all --max-duration 3s
--pause 2s`` prunes two threads and stops; run again, it used to spend its window pausing after the
threads the last run pruned (nothing to prune) and never got further. A thread decided from its
plan without a transaction (nothing to prune, skipped, not found) now costs no pause, so each run
reaches threads the last did not: a store of N threads, every one with checkpoints to prune, is
wholly pruned after ceil(N / k) runs of the same command, k the threads one window prunes. On
every store kind, threads written by the real graph."""

from __future__ import annotations

import json
import math

import pytest

from tests.conftest import backend_for
from tests.support.backends import KINDS
from tests.support.cli import run
from tests.support.prune_graphs import write_huge_thread

THREADS = [f"acme:_:night-{i:02d}" for i in range(6)]
PER_WINDOW = 2  # --max-duration 3s with --pause 2s: a thread at 0 s, one at 2 s, then the time is up


def _store(kind: str, request) -> str:
    backend = backend_for(kind, request)
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        for key in THREADS:
            write_huge_thread(saver, steps=3, key=key)  # a few checkpoints each: every thread has some to prune
    return url


@pytest.mark.parametrize("kind", KINDS)
def test_repeated_short_windows_prune_every_thread_in_ceil_n_over_k_runs(kind, request, tmp_path):
    url = _store(kind, request)
    receipt = tmp_path / "night.jsonl"
    args = ("thread", "prune", "-s", url, "--all", "--keep", "1", "--yes", "-f", "json", "--receipt", str(receipt),
            "--max-duration", "3s", "--pause", "2s")
    nights = math.ceil(len(THREADS) / PER_WINDOW)
    pruned: list[str] = []
    for night in range(1, nights + 1):
        res = run(*args)
        summary = json.loads(res.out)["summary"]
        assert summary["failed"] == 0, res.out
        # Each night prunes threads no earlier night did, passing those quickly.
        assert summary["nothing_to_prune"] == len(pruned), (night, summary)
        assert summary["pruned"] == min(PER_WINDOW, len(THREADS) - len(pruned)), (night, summary)
        records = [json.loads(line) for line in receipt.read_text().splitlines()]
        done_now = [r["key"] for r in records[records.index(next(r for r in reversed(records) if r["record"] == "start")):]
                    if r["record"] == "thread" and r["status"] == "pruned"]
        assert not set(done_now) & set(pruned)
        pruned += done_now
        assert res.code == (0 if len(pruned) == len(THREADS) else 11), res.err
    assert sorted(pruned) == THREADS
    # Nothing is left to prune.
    left = json.loads(run("thread", "prune", "-s", url, "--all", "--keep", "1", "--dry-run", "-f", "json").out)
    assert left["summary"]["to_prune"] == 0


def test_a_thread_with_nothing_to_prune_costs_no_pause(request):
    """The pause is the room left after a transaction: twelve threads with nothing to prune and a
    10 s pause end at once."""
    import time

    url = _store("sqlite", request)
    assert run("thread", "prune", "-s", url, "--all", "--keep", "1", "--yes").code == 0
    started = time.monotonic()
    res = run("thread", "prune", "-s", url, "--all", "--keep", "1", "--yes", "-f", "json", "--pause", "10s")
    assert res.code == 0, res.err
    assert json.loads(res.out)["summary"]["nothing_to_prune"] == len(THREADS)
    assert time.monotonic() - started < 10
