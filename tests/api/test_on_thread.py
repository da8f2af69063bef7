"""The Python API hands each thread to the caller as it is done (``on_thread``, issue #35 item 2),
the same data the command's ``-f jsonl`` prints: a prune's plan record per thread, a prune's and an
erase's receipt entry per thread, on every kind. The library renders nothing: the events are typed
(changes/report.ThreadDone), the command line renders them (cli/report.py)."""

from __future__ import annotations

import json

from symfonic_cli import api
from symfonic_cli.changes.plan import ThreadOutcome
from symfonic_cli.changes.report import ThreadDone
from symfonic_cli.prune.records import PruneOutcome
from tests.support.cli import run

# The run's own: its id, its times, who ran it.
VOLATILE = {"receipt_id", "time", "started", "operator"}


def _jsonl(*args: str) -> list[dict]:
    r = run(*args, "-f", "jsonl")
    assert r.out, r.err
    return [json.loads(line) for line in r.out.splitlines()]


def _steady(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in VOLATILE}


def test_a_prune_plan_hands_over_each_thread_as_jsonl_prints_it(any_kind):
    url = any_kind.new_store()
    printed = [line for line in _jsonl("thread", "prune", "-s", url, "--all", "--keep", "2", "--dry-run") if line["record"] == "plan"]
    told: list = []
    plan = api.plan_prune(url, all_threads=True, keep=2, on_thread=told.append)
    assert len(printed) >= 3 and all(isinstance(t, dict) for t in told)
    assert [{"record": "plan", **t} for t in told] == printed  # the same records, in the same order
    assert list(plan["threads"]) == told


def test_a_prune_hands_over_each_thread_as_jsonl_prints_it(any_kind):
    printed_url, api_url = any_kind.new_store(), any_kind.new_store()
    printed = [line for line in _jsonl("thread", "prune", "-s", printed_url, "--all", "--yes") if line["record"] == "thread"]
    told: list[ThreadDone] = []
    result = api.prune(api_url, all_threads=True, yes=True, on_thread=told.append)
    assert len(printed) >= 3 and [d.done for d in told] == list(range(1, len(told) + 1))
    assert all(isinstance(d, ThreadDone) and isinstance(d.outcome, PruneOutcome) and d.total == len(told) for d in told)
    lines = [{"record": "thread", **d.head, **d.entry} for d in told]
    # Each store's own name and identity aside (two stores), the lines are the command's.
    assert [_steady({**line, "store": "", "store_identity": ""}) for line in lines] == \
        [_steady({**line, "store": "", "store_identity": ""}) for line in printed]
    assert [line["store"] for line in lines] == [result["store"]] * len(lines)
    assert [d.entry for d in told] == list(result["threads"])  # the result holds what was handed over


def test_an_erase_hands_over_each_thread_as_its_receipt_holds_it(any_kind):
    printed_url, api_url = any_kind.new_store(), any_kind.new_store()
    (receipt,) = _jsonl("thread", "erase", "-s", printed_url, "--tenant", "globex", "--all-sessions", "--yes")
    told: list[ThreadDone] = []
    plan = api.plan_erase(api_url, tenant="globex", all_sessions=True)
    result = api.execute(plan, yes=True, on_thread=told.append)
    assert all(isinstance(d.outcome, ThreadOutcome) for d in told) and len(told) == len(receipt["threads"]) >= 2
    assert [_steady(d.entry) for d in told] == [_steady(t) for t in receipt["threads"]]
    assert [d.entry for d in told] == list(result["threads"])


def test_on_thread_must_be_a_function(sqlite_store):
    import pytest

    from symfonic_cli.errors import UsageError

    with pytest.raises(UsageError, match="on_thread must be a function or None"):
        api.prune(str(sqlite_store), all_threads=True, dry_run=True, on_thread="print")
