"""The Python API's changing operations return a typed RunResult (issue #35 item 2): its fields,
and the document the command prints, equal to that JSON; never printed text parsed back."""

from __future__ import annotations

import json

from symfonic_cli import api
from symfonic_cli.changes.result import RunResult
from tests.support.cli import run


def test_erase_prune_and_export_return_typed_results(sqlite_store, tmp_path):
    url, key = str(sqlite_store), "acme:_:s-001"
    plan = api.erase(url, thread=key, dry_run=True)
    assert isinstance(plan, RunResult) and plan.operation == "erase" and plan.dry_run
    assert [t["key"] for t in plan.threads] == [key] and plan.summary == plan["summary"]
    printed = json.loads(run("thread", "erase", "-s", url, "-t", key, "--dry-run", "-f", "json").out)
    assert plan.to_json() == printed and json.loads(json.dumps(plan.to_json())) == printed
    pruned = api.prune(url, thread=key, yes=True)
    assert pruned.operation == "prune" and not pruned.dry_run and pruned.receipt_id and pruned.summary["pruned"] == 1
    bundle = api.export(url, str(tmp_path / "b"), thread=key)
    assert bundle.operation == "export" and bundle.threads == 1 and dict(bundle)["format"] == "dir"


def test_progress_is_a_callback_the_caller_supplies(sqlite_store, tmp_path):
    # A program is told after each thread; nothing is drawn (its stderr is no terminal).
    from symfonic_cli.environment import Environment
    from symfonic_cli.erase.run import EraseRequest
    from symfonic_cli.erase.run import run as erase_run
    from symfonic_cli.export.run import ExportRequest
    from symfonic_cli.export.run import run as export_run
    from symfonic_cli.location import resolve_store
    from symfonic_cli.selection import key_list

    keys = [t["key"] for t in json.loads(run("threads", "list", "-s", str(sqlite_store), "-f", "json").out)][:2]
    loc = resolve_store(str(sqlite_store))
    told: list[tuple[str, int, int]] = []
    env = Environment.library()
    env.on_progress = lambda verb, done, total: told.append((verb, done, total))
    export_run(ExportRequest(location=loc, options={}, selection={}, output=str(tmp_path / "b"), keys=keys, prefix=None,
                             fmt="json"), env)
    assert told == [("exported", 1, 2), ("exported", 2, 2)]
    told.clear()
    env = Environment.library()
    env.on_progress = lambda verb, done, total: told.append((verb, done, total))
    outcome = erase_run(EraseRequest(location=loc, options={}, selection=key_list(keys), yes=True), env)
    assert told == [("erased", 1, 2), ("erased", 2, 2)] and outcome is not None and outcome.document["summary"]["erased"] == 2
