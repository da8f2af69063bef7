"""A store whose checkpoint tables carry triggers: an erase would run the store's own code inside
each thread's transaction, where a trigger could delete another thread's rows unseen by the plan
check (it counts only the statement's own rows). Refused before anything is deleted, dry run too."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.support.cli import run

ASKED, OTHER = "acme:eu:s-002", "globex:_:s-100"


def _rows(path) -> dict[str, int]:
    with sqlite3.connect(path) as conn:
        return {
            key: conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = ?", (key,)).fetchone()[0]
            + conn.execute("SELECT count(*) FROM writes WHERE thread_id = ?", (key,)).fetchone()[0]
            for key in (ASKED, OTHER)
        }


def _add_trigger(path, sql: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute(sql)
    conn.commit()
    conn.close()


@pytest.mark.parametrize("table", ["writes", "checkpoints", "WRITES"])
@pytest.mark.parametrize("dry_run", [False, True])
def test_a_trigger_on_an_erased_table_is_refused(sqlite_store, table, dry_run):
    _add_trigger(sqlite_store, f"CREATE TRIGGER \"sneaky\x1b[2J\" AFTER DELETE ON {table} BEGIN "
                               f"DELETE FROM checkpoints WHERE thread_id = '{OTHER}'; END")
    before = _rows(sqlite_store)
    assert all(before.values())
    res = run("thread", "erase", "-s", str(sqlite_store), "-t", ASKED, "--yes", *(["--dry-run"] if dry_run else []))
    assert res.code == 4, res.err
    assert "has triggers on the tables an erase deletes from" in res.err and "nothing was deleted" in res.err
    assert "\x1b" not in res.err and "\\x1b[2J" in res.err  # the trigger's name, escaped
    assert len(res.err.strip().splitlines()) == 1
    assert _rows(sqlite_store) == before


def test_a_trigger_elsewhere_does_not_stop_the_erase(sqlite_store):
    _add_trigger(sqlite_store, "CREATE TABLE audit (n INTEGER)")
    _add_trigger(sqlite_store, "CREATE TRIGGER on_audit AFTER INSERT ON audit BEGIN SELECT 1; END")
    before = _rows(sqlite_store)
    res = run("thread", "erase", "-s", str(sqlite_store), "-t", ASKED, "--yes", "-f", "json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["summary"]["erased"] == 1
    after = _rows(sqlite_store)
    assert after[ASKED] == 0 and after[OTHER] == before[OTHER]
