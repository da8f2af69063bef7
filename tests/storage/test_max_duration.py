"""--max-duration (issue #38 item 2): a night job's window. The run stops cleanly between two threads
once the time is up (each thread made slow by the suite's fault hook), exit 11; the receipt's end
record says `time limit` and what is left (not_attempted); the same command run again continues,
and no thread is counted twice (the second run's pruned/erased plus the first's are the whole). The
window counts from the first thread: a first page that is slow to read (a sweep on a very large
store) does not use it up."""

from __future__ import annotations

import json
import time

import pytest

from tests.conftest import backend_for
from tests.support.backends import KINDS
from tests.support.cli import run

SLOW = {"SYMFONIC_FAULT_SLOW_THREAD": "0.4"}


def _end(receipt) -> dict:
    lines = [json.loads(line) for line in receipt.read_text().splitlines()]
    return [r for r in lines if r["record"] == "end"][-1]


@pytest.mark.parametrize("kind", KINDS)
def test_prune_stops_at_the_time_limit_and_a_rerun_continues(kind, request, tmp_path):
    backend = backend_for(kind, request)
    url = backend.new_store()
    receipt = tmp_path / "r.jsonl"
    args = ("thread", "prune", "-s", url, "--all", "--yes", "-f", "json", "--receipt", str(receipt))
    first = run(*args, "--max-duration", "1s", env=SLOW)
    assert first.code == 11, first.err
    assert "time limit" in first.err and "--max-duration 1s" in first.err and "Traceback" not in first.err
    doc = json.loads(first.out)  # complete and valid
    s = doc["summary"]
    assert 1 <= s["threads"] < s["planned"] and s["not_attempted"] == s["planned"] - s["threads"]
    assert doc["stopped"].startswith("time limit") and doc["interrupted"] is False
    end = _end(receipt)
    assert end["stopped"].startswith("time limit") and end["summary"]["not_attempted"] == s["not_attempted"]
    second = run(*args)
    assert second.code == 0, second.err
    s2 = json.loads(second.out)["summary"]
    # The threads pruned by the first run have nothing left to prune: none is pruned twice.
    whole = run("thread", "prune", "-s", backend.new_store(), "--all", "--yes", "-f", "json")
    assert s["pruned"] + s2["pruned"] == json.loads(whole.out)["summary"]["pruned"]
    assert s2["nothing_to_prune"] >= s["pruned"]


@pytest.mark.parametrize("kind", KINDS)
def test_an_erase_sweep_stops_at_the_time_limit_and_a_rerun_continues(kind, request, tmp_path):
    backend = backend_for(kind, request)
    url = backend.new_store()
    receipt = tmp_path / "r.jsonl"
    args = ("thread", "erase", "-s", url, "--inactive-for", "1s", "--yes", "-f", "json", "--receipt", str(receipt))
    time.sleep(1.1)  # the window is 1 s: a store written just now (this test run alone) has no thread older yet
    first = run(*args, "--max-duration", "1s", env=SLOW)
    assert first.code == 11, first.err
    assert "time limit" in first.err
    s = json.loads(first.out)["summary"]
    assert 1 <= s["erased"] and s["not_attempted"] > 0
    assert _end(receipt)["stopped"].startswith("time limit")
    second = run(*args)
    assert second.code == 0, second.err
    s2 = json.loads(second.out)["summary"]
    assert s["erased"] + s2["erased"] == s["planned"]  # the rest, each thread once


@pytest.mark.parametrize(("kind", "jobs"), [("sqlite", 1), ("postgres", 2)])
def test_the_window_counts_from_the_first_thread_not_the_first_page(kind, jobs, request, tmp_path):
    # The first page arrives 1.5 s late, the window is 1 s: each thread still runs inside its window.
    backend = backend_for(kind, request)
    url = backend.new_store()
    jobs_args = ("--jobs", str(jobs)) if jobs > 1 else ()
    args = ("thread", "prune", "-s", url, "--all", "--yes", "-f", "json", *jobs_args, "--max-duration", "1s")
    res = run(*args, env={**SLOW, "SYMFONIC_FAULT_LATE_FIRST_PAGE": "1.5"})
    assert res.code == 11, res.err
    s = json.loads(res.out)["summary"]
    assert s["threads"] >= 1 and s["not_attempted"] == s["planned"] - s["threads"]


def test_an_erase_request_stops_at_the_time_limit(request, tmp_path):
    backend = backend_for("sqlite", request)
    url = backend.new_store()
    receipt = tmp_path / "r.jsonl"
    args = ("thread", "erase", "-s", url, "--tenant", "acme", "--all-sessions", "--yes", "-f", "json", "--receipt", str(receipt))
    first = run(*args, "--max-duration", "1s", env=SLOW)
    assert first.code == 11, first.err
    statuses = [t["status"] for t in json.loads(first.out)["threads"]]
    assert "erased" in statuses and "not-attempted" in statuses
    assert _end(receipt)["stopped"].startswith("time limit")
    second = run(*args)
    assert second.code == 0, second.err
    assert {t["status"] for t in json.loads(second.out)["threads"]} == {"erased"}
    assert len(json.loads(second.out)["threads"]) == statuses.count("not-attempted")


@pytest.mark.parametrize("value", ["0s", "-1h", "soon", "2", "999999d"])
def test_bad_max_duration_is_a_usage_error(value, tmp_path):
    for command in ("erase", "prune"):
        res = run("thread", command, "-s", str(tmp_path / "none.db"), "-t", "a:_:b", "--yes", "--max-duration", value)
        assert res.code == 2, (command, value, res.err)
        assert "--max-duration" in res.err and "Traceback" not in res.err
