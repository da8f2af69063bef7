"""Plan first, then execute (issue #35 item 2): ``api.plan_erase``, ``plan_prune``, ``plan_export``
and ``plan_migrate`` return a typed ``Plan`` equal to the command's dry run and change nothing;
``api.execute(plan, yes=True)`` runs it on exactly the planned threads (a thread that appears under
the selection after the plan is left alone) and returns what the command prints; on every kind."""

from __future__ import annotations

import json

import pytest

import symfonic_cli
from symfonic_cli import api
from symfonic_cli.demo.graphs import agent_graph
from tests.support import backends
from tests.support.cli import run

VOLATILE = ("receipt_id", "time", "store", "store_identity", "started")


def _json(*args: str) -> dict:
    r = run(*args, "-f", "json")
    assert r.out, r.err
    return json.loads(r.out)


def _without(doc, *names: str) -> dict:
    """The document without the run's own fields (and each thread's time)."""
    out = {k: v for k, v in dict(doc).items() if k not in names}
    if isinstance(out.get("threads"), list):
        out["threads"] = [{k: v for k, v in t.items() if k != "time"} for t in out["threads"]]
    return out


def _keys(url: str) -> list[str]:
    with symfonic_cli.open_store(url) as st:
        return sorted(t.key for t in st.threads())


def _write(backend: backends.TestBackend, url: str, key: str) -> None:
    """A new thread written by the real agent graph through the kind's real saver."""
    from langchain_core.messages import HumanMessage

    with backend.saver(url) as saver:
        graph = agent_graph().compile(checkpointer=saver)
        graph.invoke({"messages": [HumanMessage(content="written after the plan")]}, {"configurable": {"thread_id": key}})


def test_an_erase_plan_changes_nothing_and_executes_only_what_it_planned(any_kind, tmp_path):
    url = any_kind.new_store()
    before = _keys(url)
    plan = api.plan_erase(url, tenant="globex", all_sessions=True, operator="api-test", receipt=str(tmp_path / "r.jsonl"))
    assert isinstance(plan, api.Plan) and plan.operation == "erase" and plan.dry_run
    assert plan.to_json() == _json("thread", "erase", "-s", url, "--tenant", "globex", "--all-sessions", "--dry-run")
    planned = [k for k in before if k.startswith("globex:")]
    assert list(plan.thread_keys) == planned and list(plan.changes) == planned and plan.summary["to_erase"] == len(planned)
    assert _keys(url) == before and not (tmp_path / "r.jsonl").exists()  # nothing changed, nothing written
    _write(any_kind, url, "globex:_:late")  # under the selection, after the plan
    with pytest.raises(symfonic_cli.SymfonicError) as refused:
        api.execute(plan)  # no yes=True: nothing deleted, exit 6
    assert refused.value.exit_code == 6 and _keys(url) == sorted([*before, "globex:_:late"])
    done = api.execute(plan, yes=True)
    assert isinstance(done, api.RunResult) and not done.dry_run and done.summary["erased"] == len(planned)
    assert [t["key"] for t in done.threads] == planned and done["selection"] == {"tenant": "globex", "sub_tenant": None, "all_sessions": True}
    assert _keys(url) == sorted([k for k in before if k not in planned] + ["globex:_:late"])
    lines = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert lines[0]["receipt_id"] == done.receipt_id and lines[0]["operator"] == "api-test"


def test_a_prune_plan_equals_the_dry_run_and_executes_only_its_threads(any_kind):
    url, other = any_kind.new_store(), any_kind.new_store()
    plan = api.plan_prune(url, tenant="acme", all_sessions=True, keep=1)
    assert plan.operation == "prune" and plan.dry_run
    assert plan.to_json() == _json("thread", "prune", "-s", url, "--tenant", "acme", "--all-sessions", "--keep", "1", "--dry-run")
    assert set(plan.changes) <= set(plan.thread_keys) and plan.changes and plan.summary["checkpoints"] > 0
    _write(any_kind, url, "acme:_:late")
    _write(any_kind, url, "acme:_:late")  # two checkpoints' turns: something a new plan would prune
    done = api.execute(plan, yes=True)
    cli = _json("thread", "prune", "-s", other, "--tenant", "acme", "--all-sessions", "--keep", "1", "--yes")
    assert _without(done, *VOLATILE) == _without(cli, *VOLATILE)
    assert "acme:_:late" not in [t["key"] for t in done.threads]
    assert api.plan_prune(url, thread="acme:_:late", keep=1).summary["to_prune"] == 1  # left as it was


def test_an_export_plan_checks_the_output_and_writes_nothing(any_kind, tmp_path):
    url = any_kind.new_store()
    out = tmp_path / "bundle"
    plan = api.plan_export(url, out, tenant="acme", all_sessions=True)
    assert plan.operation == "export" and plan.dry_run and not out.exists()
    keys = [k for k in _keys(url) if k.startswith("acme:")]
    assert list(plan.thread_keys) == keys and plan.summary == {"threads": len(keys), "not_found": 0}
    assert all(t["checkpoints"] > 0 and t["last_activity"].endswith("Z") for t in plan.threads)
    _write(any_kind, url, "acme:_:late")
    done = api.execute(plan)
    assert done.operation == "export" and done["threads"] == len(keys)
    manifest = json.loads((out / "manifest.json").read_text())
    assert [t["key"] for t in manifest["threads"]] == keys and manifest["selection"]["tenant"] == "acme"
    with pytest.raises(symfonic_cli.UsageError):  # the output exists now: refused at plan time, as the command
        api.plan_export(url, out, tenant="acme", all_sessions=True)


def test_a_migrate_plan_is_the_dry_run_and_execute_copies_its_threads(any_kind, tmp_path):
    src = any_kind.new_store()
    target = str(tmp_path / "t.db")
    plan = api.plan_migrate(src, target, tenant="acme", init_target=True)
    assert plan.operation == "migrate" and plan.dry_run and not (tmp_path / "t.db").exists()
    keys = list(plan.thread_keys)
    assert keys and set(plan.changes) == set(keys) and plan.totals["copied"] == len(keys)
    _write(any_kind, src, "acme:_:late")
    done = api.execute(plan)
    assert isinstance(done, api.RunResult) and done.totals["verified"] == len(keys) and not done.dry_run
    assert [t["thread"] for t in done.threads] == keys and "acme:_:late" not in _keys(target)
    again = api.migrate(src, target, thread=keys)  # migrate's typed result reads as its JSON
    assert again == _json("migrate", "--from", src, "--to", target, *[a for k in keys for a in ("-t", k)])


def test_a_plan_takes_no_dry_run_or_yes_and_execute_takes_only_a_plan(sqlite_store):
    for bad in (lambda: api.plan_erase(str(sqlite_store), thread="acme:_:s-001", yes=True),
                lambda: api.plan_prune(str(sqlite_store), all_threads=True, dry_run=True),
                lambda: api.plan_erase(str(sqlite_store), thread=7),
                lambda: api.execute({"threads": []}),
                lambda: api.execute(api.plan_erase(str(sqlite_store), thread="acme:_:s-001"), yes="yes")):
        with pytest.raises(symfonic_cli.UsageError) as err:
            bad()
        assert err.value.exit_code == 2
    with pytest.raises(symfonic_cli.NotFoundError):  # every check the command makes, at plan time
        api.plan_erase(str(sqlite_store), thread="acme:_:s-01")


def test_the_export_driver_renders_nothing_and_returns_what_it_wrote(sqlite_store, tmp_path):
    # The library hands back an ExportResult; the command renders it (the goldens hold its bytes).
    import io

    from symfonic_cli.environment import Environment
    from symfonic_cli.export.run import ExportRequest, ExportResult
    from symfonic_cli.export.run import run as export_run
    from symfonic_cli.location import resolve_store

    keys = _keys(str(sqlite_store))[:2]
    env = Environment(stdout=io.StringIO(), stderr=io.StringIO())
    result = export_run(ExportRequest(location=resolve_store(str(sqlite_store)), options={}, selection={}, output=str(tmp_path / "b"),
                                      keys=keys, fmt="text"), env)
    assert env.stdout.getvalue() == "" and isinstance(result, ExportResult)
    assert result.document() == {"output": str(tmp_path / "b"), "format": "dir", "threads": 2, "not_found": []}
    printed = _json("thread", "export", "-s", str(sqlite_store), "-t", keys[0], "-t", keys[1], "-o", str(tmp_path / "c"))
    assert {**printed, "output": ""} == {**result.document(), "output": ""}
