"""``threads list`` and ``store info`` on SQLite."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime

from tests.support.cli import run


def listed(store, *args):
    res = run("threads", "list", "--store", str(store), "--format", "json", *args)
    assert res.code == 0, res.err
    return json.loads(res.out)


def test_one_row_per_thread_newest_first(sqlite_master):
    out = listed(sqlite_master)
    conn = sqlite3.connect(sqlite_master)
    expected = conn.execute(
        "SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id ORDER BY max(checkpoint_id) DESC"
    ).fetchall()
    conn.close()
    assert [(t["key"], t["checkpoints"]) for t in out] == expected
    last = [datetime.fromisoformat(t["last_activity"]) for t in out]
    assert last == sorted(last, reverse=True)
    assert all(t["first_activity"] <= t["last_activity"] for t in out)
    assert list(out[0]) == ["key", "tenant", "sub_tenant", "session", "checkpoints", "first_activity", "last_activity"]


def test_key_parts(sqlite_master):
    by_key = {t["key"]: t for t in listed(sqlite_master)}
    assert (by_key["acme:eu:s-002"]["tenant"], by_key["acme:eu:s-002"]["sub_tenant"], by_key["acme:eu:s-002"]["session"]) == ("acme", "eu", "s-002")
    assert by_key["acme:_:s-001"]["sub_tenant"] is None
    assert by_key["legacy-thread-id"]["tenant"] is None and by_key["legacy-thread-id"]["session"] is None


def test_activity_is_close_to_checkpoint_ts(sqlite_master):
    """Activity comes from the UUIDv6 checkpoint ids; it agrees with the stored ts. LangGraph makes
    the id and the ts in two calls, so on a loaded machine they lie tens of milliseconds apart; a
    wrong unit or zone would be seconds to hours off."""
    out = {t["key"]: t for t in listed(sqlite_master)}
    rows = json.loads(run("transcript", "show", "--store", str(sqlite_master), "--thread", "globex:_:s-101", "--format", "json").out)
    first_ts = datetime.fromisoformat(rows[0]["timestamp"])
    first = datetime.fromisoformat(out["globex:_:s-101"]["first_activity"])
    assert abs((first_ts - first).total_seconds()) < 1.0


def test_filters_and_limit(sqlite_master):
    acme = listed(sqlite_master, "--tenant", "acme")
    assert {t["key"] for t in acme} == {"acme:_:s-001", "acme:eu:s-002", "acme:eu:s-003", "acme:_:s-rewrite"}
    eu = listed(sqlite_master, "--tenant", "acme", "--sub-tenant", "eu")
    assert {t["key"] for t in eu} == {"acme:eu:s-002", "acme:eu:s-003"}
    none = listed(sqlite_master, "--tenant", "acme", "--sub-tenant", "_")
    assert {t["key"] for t in none} == {"acme:_:s-001", "acme:_:s-rewrite"}
    assert listed(sqlite_master, "--tenant", "acm") == []
    assert len(listed(sqlite_master, "--limit", "3")) == 3
    assert listed(sqlite_master, "--limit", "3") == listed(sqlite_master)[:3]
    res = run("threads", "list", "--store", str(sqlite_master), "--sub-tenant", "eu")
    assert res.code == 2


def test_text_and_table_formats(sqlite_master):
    text = run("threads", "list", "--store", str(sqlite_master)).out.splitlines()
    assert text[0].split("\t") == ["key", "status", "checkpoints", "last_activity"]  # the table's columns (issue #37)
    assert len(text) == 9
    table = run("threads", "list", "--store", str(sqlite_master), "--format", "table", env={"COLUMNS": "300"}).out
    assert "acme:eu:s-002" in table and "┃" in table
    jsonl = run("threads", "list", "--store", str(sqlite_master), "--format", "jsonl").out.splitlines()
    assert [json.loads(x) for x in jsonl] == listed(sqlite_master)


def test_store_info(sqlite_master):
    res = run("store", "info", "--store", str(sqlite_master), "--format", "json")
    assert res.code == 0, res.err
    info = json.loads(res.out)
    conn = sqlite3.connect(sqlite_master)
    assert info["kind"] == "sqlite"
    assert info["threads"] == conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()[0] == 8
    assert info["checkpoints"] == conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
    assert info["writes"] == conn.execute("SELECT count(*) FROM writes").fetchone()[0]
    conn.close()
    assert info["journal_mode"] == "wal"
    assert info["schema_variant"] == "writes.task_path present"
    assert info["file_size"] == sqlite_master.stat().st_size
    assert info["namespaces"] >= 2  # the subgraph namespace
    text = run("store", "info", "--store", str(sqlite_master)).out
    assert "journal mode" in text and "sqlite" in text


def test_store_info_old_schema_without_task_path(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL,
            parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, metadata BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));
        CREATE TABLE writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL,
            task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT, value BLOB,
            PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));
        """
    )
    conn.commit()
    conn.close()
    info = json.loads(run("store", "info", "--store", str(path), "--format", "json").out)
    assert info["threads"] == 0 and "without task_path" in info["schema_variant"]
    assert json.loads(run("threads", "list", "--store", str(path), "--format", "json").out) == []


def test_record_encoder_writes_what_json_dumps_writes():
    """Listings encode rows through a faster path; its text must be json_dumps's, byte for byte."""
    import random

    from symfonic_cli import render

    rng = random.Random(7)
    columns = ("key", "tenant", "sub_tenant", "session", "checkpoints", "first_activity", "last_activity")
    alphabet = ["a", "Z", "é", "😀", "\x00", "\x1b", "\x7f", "\x9b", "\u2028", "\u202e", '"', "\\", "%", "%s", "\n", "\t", "\ud800"]

    def value():
        r = rng.random()
        if r < 0.15:
            return None
        if r < 0.3:
            return rng.randint(-(10**20), 10**20)
        if r < 0.35:
            return rng.choice([True, False, 1.5, [1], {"a": 1}])  # not flat: the general path
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))

    encoder = render._RecordEncoder(columns)
    fast = 0
    for _ in range(20_000):
        rec = {c: value() for c in columns}
        if rng.random() < 0.05:
            rec = dict(reversed(list(rec.items())))  # other key order: the general path
        assert encoder.dumps(rec) == render.json_dumps(rec), rec
        fast += tuple(rec) == columns and all(type(v) in (str, int, type(None)) for v in rec.values())
    assert fast > 1000  # the fast path was exercised, not only the fallback


def test_escaping_shortcut_is_exact():
    """escape_controls skips the regex for printable text holding none of the invisible
    characters: that is exact only while every character it escapes is non-printable to Python
    or one of those, over the whole of Unicode."""
    import re
    import sys

    from symfonic_cli import render
    from symfonic_cli.render.escape import _INVISIBLE

    escaped = re.compile(render._CONTROL)
    chars = [chr(c) for c in range(sys.maxunicode + 1) if escaped.match(chr(c))]
    assert len(chars) > 60 and "\u202e" in chars and "\x1b" in chars
    assert not [c for c in chars if c.isprintable() and c not in _INVISIBLE]
    for text in ("plain", "tab\there", "bell\x07", "rtl \u202eabc", "nl\n", "é😀"):
        assert render.escape_inline(text) == re.sub(
            render._CONTROL, lambda m: render._escape_control(m), text
        ).replace("\n", "\\n").replace("\t", "\\t")
