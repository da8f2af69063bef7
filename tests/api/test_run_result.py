"""The Python API's changing operations return a typed RunResult (issue #35 item 2): its fields,
and the document the command prints, equal to that JSON; never printed text parsed back."""

from __future__ import annotations

import json

from symfonic_cli import api
from symfonic_cli.erase.result import RunResult
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
