"""migrate at the terminal (issue #15): errors name --to/--from; --init-target --dry-run says what
it would create and creates nothing; the dry-run plan keeps keys whole at 80 and 120 columns."""

from __future__ import annotations

import json

from tests.support.cli import run
from tests.support.terminal import on_terminal


def test_errors_name_the_option_typed(sqlite_master, tmp_path):
    res = run("migrate", "--from", str(sqlite_master), "--to", str(tmp_path / "new.db"), "--all", "--dry-run")
    assert res.code == 4 and "check --to" in res.err and "--store" not in res.err
    res = run("migrate", "--from", str(tmp_path / "missing.db"), "--to", str(tmp_path / "new.db"), "--all")
    assert res.code == 4 and "check --from" in res.err and "--store" not in res.err


def test_init_target_dry_run_creates_nothing(sqlite_master, tmp_path):
    target = tmp_path / "new.db"
    res = run("migrate", "--from", str(sqlite_master), "--to", str(target), "--all", "--dry-run", "--init-target", "-f", "json")
    assert res.code == 0, res.err
    assert not target.exists()
    assert "would create" in res.err and str(target) in res.err
    doc = json.loads(res.out)
    listed = json.loads(run("threads", "list", "-s", str(sqlite_master), "-f", "json").out)
    threads = doc["threads"]
    assert {t["thread"] for t in threads} == {r["key"] for r in listed}
    assert all(t["status"] == "copy" for t in threads)
    assert sum(t["checkpoints_copied"] for t in threads) == sum(r["checkpoints"] for r in listed)
    # The real run then creates what the plan said.
    res = run("migrate", "--from", str(sqlite_master), "--to", str(target), "--all", "--init-target", "-f", "json")
    assert res.code == 0 and target.exists()
    assert json.loads(res.out)["totals"]["copied"] == len(listed)


def test_dry_run_plan_keeps_keys_whole(sqlite_master, tmp_path):
    keys = [r["key"] for r in json.loads(run("threads", "list", "-s", str(sqlite_master), "-f", "json").out)]
    for cols in (80, 120):
        code, screen = on_terminal("migrate", "--from", str(sqlite_master), "--to", str(tmp_path / f"n{cols}.db"),
                                   "--all", "--dry-run", "--init-target", cols=cols, rows=500)
        assert code == 0, screen
        lines = screen.splitlines()
        for key in keys:
            assert any(key in line for line in lines), (key, screen)
