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


def _pg_rows(conn) -> dict[str, int]:
    return {
        key: sum(conn.execute(f"SELECT count(*) FROM {t} WHERE thread_id = %s", (key,)).fetchone()[0]
                 for t in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"))
        for key in (ASKED, OTHER)
    }


@pytest.mark.parametrize("what", ["trigger", "rule", "disabled"])
@pytest.mark.parametrize("dry_run", [False, True])
def test_postgres_triggers_and_rules_on_erased_tables_are_refused(request, what, dry_run):
    import psycopg

    from tests.conftest import backend_for

    url = backend_for("postgres", request).new_store()
    with psycopg.connect(url, autocommit=True) as conn:
        if what == "rule":
            conn.execute(f"CREATE RULE sneaky AS ON DELETE TO checkpoint_writes DO ALSO "
                         f"DELETE FROM checkpoints WHERE thread_id = '{OTHER}'")
        else:
            conn.execute(f"CREATE FUNCTION sneaky() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                         f"DELETE FROM checkpoints WHERE thread_id = '{OTHER}'; RETURN OLD; END $$")
            conn.execute("CREATE TRIGGER sneaky AFTER DELETE ON checkpoint_blobs FOR EACH ROW EXECUTE FUNCTION sneaky()")
            if what == "disabled":
                conn.execute("ALTER TABLE checkpoint_blobs DISABLE TRIGGER sneaky")
        before = _pg_rows(conn)
    assert all(before.values())
    res = run("thread", "erase", "-s", url, "-t", ASKED, "--yes", "-f", "json", *(["--dry-run"] if dry_run else []))
    with psycopg.connect(url, autocommit=True) as conn:
        after = _pg_rows(conn)
    if what == "disabled":  # a disabled trigger runs nothing: the erase goes ahead
        assert res.code == 0, res.err
        assert after[OTHER] == before[OTHER] and after[ASKED] == (before[ASKED] if dry_run else 0)
        return
    assert res.code == 4, res.err
    assert "triggers or rules on the tables an erase deletes from" in res.err and "'sneaky' on 'checkpoint" in res.err
    assert res.out == ""
    assert after == before
