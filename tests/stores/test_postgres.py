"""PostgreSQL stores on a real server: opening, read-only proofs, bad input, and the same output as SQLite."""

from __future__ import annotations

import json
import re
import socket
import time
import uuid
from urllib.parse import quote

import pytest

from tests.support import backends
from tests.support.cli import run
from tests.support.pg_server import PASSWORD
from tests.support.scenarios import scenarios

TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


@pytest.fixture(scope="module")
def pg(postgres_backend):
    return postgres_backend


@pytest.fixture(scope="module")
def pg_url(pg):
    """One scenario store shared by the read-only tests of this module (they never change it)."""
    return pg.new_store()


def _secret_free(text: str) -> None:
    for secret in (PASSWORD, quote(PASSWORD, safe=""), "Wr0ng-Secret-7741"):
        assert secret not in text


def _fails(url: str, *args: str, env=None, code: int = 4) -> str:
    res = run(*args, "--store", url, env=env)
    assert res.code == code, (res.code, res.out, res.err)
    assert res.out == ""
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("symfonic: error: "), res.err
    assert "Traceback" not in res.err
    _secret_free(res.err)
    return lines[0]


def _json(*args: str, env=None):
    res = run(*args, "--format", "json", env=env)
    assert res.code == 0, res.err
    _secret_free(res.out + res.err)
    return json.loads(res.out)


# -- the same conversations give the same output on every kind -------------------------------


def _norm_transcript(rows: list[dict]) -> list[tuple]:
    # Generated message ids and times differ between runs; which rows share a time does not.
    stamps = sorted({r["timestamp"] for r in rows if r["timestamp"]})
    return [
        (
            r["index"], r["role"], r["content"],
            None if r["message_id"] and _UUID.match(r["message_id"]) else r["message_id"],
            stamps.index(r["timestamp"]) if r["timestamp"] else None,
        )
        for r in rows
    ]


def _norm_threads(rows: list[dict]) -> list[tuple]:
    for r in rows:
        assert r["first_activity"] and r["last_activity"] and r["first_activity"] <= r["last_activity"]
    return [(r["key"], r["tenant"], r["sub_tenant"], r["session"], r["checkpoints"]) for r in rows]


@pytest.fixture(scope="module")
def sqlite_url():
    return backends.get("sqlite").new_store()


def test_same_threads_list_as_sqlite(any_kind, sqlite_url):
    url = any_kind.new_store()
    for extra in ((), ("--tenant", "acme"), ("--tenant", "acme", "--sub-tenant", "eu"), ("--limit", "3")):
        ours = _norm_threads(_json("threads", "list", "--store", url, *extra))
        ref = _norm_threads(_json("threads", "list", "--store", sqlite_url, *extra))
        assert ours == ref and ours
    assert len(_json("threads", "list", "--store", url)) == len(scenarios())


def test_same_transcripts_as_sqlite(any_kind, sqlite_url):
    url = any_kind.new_store()
    for sc in scenarios():
        for extra in ((), ("--speaker", "user", "--index", "-1")):
            ours = _json("transcript", "show", "--store", url, "--thread", sc.key, *extra)
            ref = _json("transcript", "show", "--store", sqlite_url, "--thread", sc.key, *extra)
            assert _norm_transcript(ours) == _norm_transcript(ref), sc.key
            assert ours and all(r["timestamp"] for r in ours)


def _norm_value(v):
    if isinstance(v, list):
        return [_norm_value(x) for x in v]
    if hasattr(v, "model_dump"):
        d = v.model_dump()
        if isinstance(d.get("id"), str) and _UUID.match(d["id"]):
            d["id"] = "generated"
        return (type(v).__name__, d)
    return v


def test_read_checkpoint_matches_sqlite(pg_url, sqlite_url):
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    with open_store(parse_location(pg_url)) as pgs, open_store(parse_location(sqlite_url)) as sq:
        for sc in scenarios():
            a = pgs.read_checkpoint(sc.key, channels=("messages", "__start__", "tools", "nope"))
            b = sq.read_checkpoint(sc.key, channels=("messages", "__start__", "tools", "nope"))
            assert a is not None and b is not None
            assert sorted(a.channel_values) == sorted(b.channel_values)
            assert _norm_value(a.channel_values["messages"]) == _norm_value(b.channel_values["messages"])
            assert sorted(a.channel_versions) == sorted(b.channel_versions)
            assert {k: a.metadata.get(k) for k in ("source", "step")} == {k: b.metadata.get(k) for k in ("source", "step")}
            assert a.ts and a.parent_checkpoint_id and a.blocked == b.blocked == frozenset()
            # An earlier checkpoint by id, and one that does not exist.
            older = pgs.read_checkpoint(sc.key, checkpoint_id=a.parent_checkpoint_id)
            assert older is not None and older.checkpoint_id == a.parent_checkpoint_id
            assert pgs.read_checkpoint(sc.key, checkpoint_id="no-such-id") is None
        assert pgs.read_checkpoint("no-such-thread") is None


def test_message_blobs_shipped_once_per_version(pg, pg_url):
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    key = "acme:_:s-001"
    with open_store(parse_location(pg_url)) as st:
        states = list(st.iter_message_states(key))
    with pg.admin(pg.db_of(pg_url)) as conn:
        n, distinct = conn.execute(
            "SELECT count(*), count(DISTINCT (checkpoint_ns, checkpoint->'channel_versions'->>'messages')) "
            "FILTER (WHERE checkpoint->'channel_versions' ? 'messages') FROM checkpoints WHERE thread_id = %s",
            (key,),
        ).fetchone()
    assert len(states) == n
    ids = [s.checkpoint_id for s in states]
    assert ids == sorted(ids, reverse=True)
    shipped = [s for s in states if s.payload is not None]
    assert len(shipped) == distinct and len({(s.checkpoint_ns, s.version) for s in shipped}) == distinct
    assert all(s.encoding == "channel" and s.ts for s in states)
    # The blob comes first for its version, so a reader caching by version never misses.
    seen = set()
    for s in states:
        if s.version is not None:
            assert (s.payload is not None) == (s.version not in seen)
            seen.add(s.version)


def test_listing_streams_through_a_server_side_cursor(pg_url):
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    with open_store(parse_location(pg_url)) as st:
        it = st.list_threads()
        first = next(it)
        cursors = [r[0] for r in st.conn.execute("SELECT name FROM pg_cursors").fetchall()]
        rest = list(it)
    assert first.key and len(rest) == len(scenarios()) - 1
    assert any(name.startswith("symfonic_") for name in cursors)


# -- opening and masking ----------------------------------------------------------------------


def test_store_info_is_aggregated_and_masked(pg, pg_url):
    info = _json("store", "info", "--store", pg_url)
    assert info["kind"] == "postgres"
    assert info["location"].startswith(f"postgresql://{pg.user}:***@")
    assert info["threads"] == len(scenarios())
    with pg.admin(pg.db_of(pg_url)) as conn:
        counts = conn.execute(
            "SELECT (SELECT count(*) FROM checkpoints), (SELECT count(*) FROM checkpoint_writes), "
            "(SELECT count(*) FROM checkpoint_blobs)"
        ).fetchone()
    assert (info["checkpoints"], info["writes"], info["blobs"]) == counts
    assert info["migration_version"] == 9 and info["schema"] == "public"
    assert info["read-only_session"] == "on"
    assert all(info[f"{t}_size"] > 0 for t in TABLES)
    text = run("store", "info", "--store", pg_url, "--format", "text")
    assert text.code == 0 and ":***@" in text.out
    _secret_free(text.out)


def test_postgres_scheme_and_password_from_environment(pg, pg_url):
    db = pg.db_of(pg_url)
    bare = pg.url(db).replace(f":{quote(PASSWORD, safe='')}@", "@").replace("postgresql://", "postgres://")
    assert PASSWORD not in bare and quote(PASSWORD, safe="") not in bare
    rows = _json("threads", "list", "--store", bare, env={"PGPASSWORD": PASSWORD})
    assert len(rows) == len(scenarios())
    line = _fails(bare, "threads", "list", env={"PGPASSWORD": "Wr0ng-Secret-7741"})
    assert "credentials" in line


def test_named_store_from_config(pg_url, tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[stores.prod]\nurl = "{pg_url}"\npg_schema = "public"\n')
    rows = _json("threads", "list", "--store", "prod", env={"SYMFONIC_CONFIG": str(cfg)})
    assert len(rows) == len(scenarios())


# -- read-only, enforced by the server --------------------------------------------------------


def test_session_is_read_only_on_the_server(pg_url):
    import psycopg

    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    with open_store(parse_location(pg_url)) as st:
        assert st.conn.execute("SHOW default_transaction_read_only").fetchone()[0] == "on"
        for stmt in ("INSERT INTO checkpoint_migrations (v) VALUES (999)", "CREATE TABLE intruder (x int)", "DELETE FROM checkpoints"):
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
                st.conn.execute(stmt)


def _catalog(pg, db: str):
    with pg.admin(db) as conn:
        rels = conn.execute(
            "SELECT n.nspname, c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') ORDER BY 1, 2"
        ).fetchall()
        data = [conn.execute(f"SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM {t} AS t").fetchone()[0] for t in TABLES]
    return rels, data


def _log_mark(pg) -> int:
    return pg.log.stat().st_size if pg.log else 0


def _logged_changes(pg, mark: int, db: str) -> list[str]:
    if not pg.log:
        return []
    with open(pg.log, "rb") as fh:
        fh.seek(mark)
        new = fh.read().decode(errors="replace")
    return [line for line in new.splitlines() if f"db={db} " in line and "statement:" in line]


def test_every_command_under_a_select_only_role_changes_nothing(pg, pg_url):
    from psycopg import sql

    db = pg.db_of(pg_url)
    pw = "Wr0ng-Secret-7741x"
    url = pg.create_role(db, pw)
    role = pg.roles[-1]
    before, mark = _catalog(pg, db), _log_mark(pg)
    commands = [
        ("threads", "list"),
        ("threads", "list", "--tenant", "acme"),
        ("store", "info"),
        ("transcript", "show", "--thread", "acme:_:s-001"),
        ("transcript", "show", "--thread", "initech:_:s-sub", "--since", "2000-01-01"),
    ]
    for cmd in commands:
        res = run(cmd[0], cmd[1], "--store", url, *cmd[2:], "--format", "json")
        assert res.code == 0, (cmd, res.err)
        assert json.loads(res.out)
        assert pw not in res.out + res.err
    assert _catalog(pg, db) == before
    assert _logged_changes(pg, mark, db) == []
    if pg.log:  # the log does record statements of this kind: the check above can fail
        with pg.admin(db) as conn:
            conn.execute("CREATE TEMP TABLE canary (x int)")
        assert _logged_changes(pg, mark, db)
    # Without SELECT on one table: a one-line privilege error.
    with pg.admin(db) as conn:
        conn.execute(sql.SQL("REVOKE SELECT ON checkpoint_blobs FROM {}").format(sql.Identifier(role)))
    line = _fails(url, "threads", "list")
    assert "missing privilege" in line and "checkpoint_blobs" in line and ":***@" in line


# -- bad input: one line, exit 4, password masked ---------------------------------------------


def test_wrong_password(pg, pg_url):
    url = pg.url(pg.db_of(pg_url), user=pg.user, password="Wr0ng-Secret-7741")
    line = _fails(url, "threads", "list")
    assert "credentials" in line and ":***@" in line


def test_missing_database(pg):
    line = _fails(pg.url(f"nope_{uuid.uuid4().hex[:6]}"), "threads", "list")
    assert "does not exist" in line and ":***@" in line


def test_host_that_does_not_answer_times_out():
    # Accepts TCP connections (the kernel does) but never says a word.
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        port = srv.getsockname()[1]
        url = f"postgresql://someone:{quote(PASSWORD, safe='')}@127.0.0.1:{port}/db"
        start = time.monotonic()
        res = run("--connect-timeout", "2", "threads", "list", "--store", url)
        elapsed = time.monotonic() - start
    assert res.code == 4 and "within 2 s" in res.err, res.err
    assert elapsed < 6
    assert len(res.err.strip().splitlines()) == 1 and ":***@" in res.err
    _secret_free(res.err)


def test_refused_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    line = _fails(f"postgresql://someone:{quote(PASSWORD, safe='')}@127.0.0.1:{port}/db", "threads", "list")
    assert "cannot connect" in line


@pytest.mark.parametrize("secret", ["p#ss-Qx81", "p?ss-Qx82", "p/ss-Qx83", "p@ss-Qx84", "p%ss-Qx85"])
def test_password_with_url_delimiters_is_never_shown(secret):
    """libpq keeps "?" and "#" inside a password, and other parsers split on "@" or "/"
    differently: whatever the reading, the password appears in no output."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql://someone:{secret}@127.0.0.1:{port}/db"
    res = run("threads", "list", "--store", url)
    assert res.code in (2, 4) and res.out == "" and "Traceback" not in res.err, res.err
    assert secret not in res.err and secret.split("-")[1] not in res.err, res.err
    from symfonic_cli.location import mask_url

    assert secret not in mask_url(url) and secret.split("-")[1] not in mask_url(url)


def test_database_without_langgraph_tables(pg):
    name = f"plain_{uuid.uuid4().hex[:8]}"
    pg._create(name)
    line = _fails(pg.url(name), "threads", "list")
    assert "not a LangGraph checkpoint store" in line and "checkpoint_blobs" in line


def test_older_migration_version(pg):
    url = pg.new_store(scenarios=False)
    with pg.admin(pg.db_of(url)) as conn:
        conn.execute("DELETE FROM checkpoint_migrations WHERE v > 6")
    line = _fails(url, "store", "info")
    assert "migration version 6" in line


# -- schema -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def schema_store(pg):
    name = f"schema_{uuid.uuid4().hex[:8]}"
    pg._create(name)
    with pg.admin(name) as conn:
        conn.execute('CREATE SCHEMA "agents"')
    opts = "options=" + quote("-csearch_path=agents", safe="")
    from tests.support.scenarios import write_scenarios

    with pg.saver(pg.url(name, query=opts)) as saver:
        saver.setup()
        write_scenarios(saver, ["acme:_:s-001", "globex:_:s-101"])
    return name, opts


def test_schema_from_url_options_or_flag(pg, schema_store):
    name, opts = schema_store
    line = _fails(pg.url(name), "threads", "list")
    assert "not a LangGraph checkpoint store" in line and "public" in line
    by_url = _json("threads", "list", "--store", pg.url(name, query=opts))
    by_flag = [r["key"] for r in _json("--pg-schema", "agents", "threads", "list", "--store", pg.url(name))]
    assert [r["key"] for r in by_url] == by_flag == ["globex:_:s-101", "acme:_:s-001"]
    info = _json("--pg-schema", "agents", "store", "info", "--store", pg.url(name))
    assert info["schema"] == "agents" and info["threads"] == 2
    rows = _json("--pg-schema", "agents", "transcript", "show", "--store", pg.url(name), "--thread", "acme:_:s-001")
    assert rows[1]["content"] == "What is the status of order 1042?"
    res = run("--pg-schema", "nope", "threads", "list", "--store", pg.url(name))
    assert res.code == 4 and "no schema 'nope'" in res.err


def test_service_file_options_are_kept_and_the_session_is_still_read_only(pg, schema_store, tmp_path, monkeypatch):
    """A pg_service.conf entry's own options (here its search_path) apply; read-only is set after connecting."""
    from psycopg.conninfo import conninfo_to_dict

    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    name, _ = schema_store
    params = conninfo_to_dict(pg.url(name))
    service = tmp_path / "pg_service.conf"
    service.write_text(
        "[agents]\n"
        + "".join(f"{k}={params[k]}\n" for k in ("host", "port", "user", "password", "dbname"))
        + "options=-csearch_path=agents\n"
    )
    env = {"PGSERVICEFILE": str(service)}
    keys = [r["key"] for r in _json("threads", "list", "--store", "postgresql://?service=agents", env=env)]
    assert keys == ["globex:_:s-101", "acme:_:s-001"]
    info = _json("store", "info", "--store", "postgresql://", env={**env, "PGSERVICE": "agents"})
    assert info["schema"] == "agents" and info["threads"] == 2
    # Options in the URL still come first, with read-only added to them at start-up.
    public = _fails("postgresql://?service=agents&options=-csearch_path%3Dpublic", "threads", "list", env=env)
    assert "not a LangGraph checkpoint store" in public
    monkeypatch.setenv("PGSERVICEFILE", str(service))
    with open_store(parse_location("postgresql://?service=agents")) as st:
        conn = st.conn
        assert conn.execute("SHOW search_path").fetchone()[0] == "agents"
        assert conn.execute("SHOW default_transaction_read_only").fetchone()[0] == "on"
        with pytest.raises(Exception, match="read-only"):
            conn.execute("CREATE TABLE agents.should_not_exist (x int)")
        # A pooler may hand over a server session without our default: the streamed reads
        # still run in transactions that begin READ ONLY.
        conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE")
        assert list(st._stream("SELECT current_setting('transaction_read_only')", ())) == [("on",)]


# -- the optional and later protocol methods, where PostgreSQL differs ------------------------


def test_checkpoint_heads_count_what_decoding_finds(pg_url):
    from symfonic_cli.transcript import timestamps
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    with open_store(parse_location(pg_url)) as st:
        for sc in scenarios():
            heads = list(st.iter_checkpoint_heads(sc.key))
            assert [h.checkpoint_id for h in heads] == sorted(h.checkpoint_id for h in heads)
            for h in heads:
                rec = st.read_checkpoint(sc.key, checkpoint_ns=h.checkpoint_ns, checkpoint_id=h.checkpoint_id)
                assert h.message_count == len(rec.channel_values.get("messages") or []), (sc.key, h)
                assert h.ts == rec.ts and h.source == rec.metadata.get("source")
            writes = list(st.iter_message_writes(sc.key))
            assert writes and all(w.payload_type == "msgpack" and w.payload for w in writes)
            # The linear resolver agrees with the exact walk on every conversation.
            assert timestamps.resolve(st, sc.key) == timestamps.exact(st, sc.key)
        run = timestamps.Resolution()
        timestamps.resolve(st, "acme:_:s-001", report=run)
        assert run.path == "linear"


def test_erase_needs_delete_privilege_and_never_runs_read_only(pg):
    from psycopg import sql

    url = pg.new_store()
    db = pg.db_of(url)
    pw = "Wr0ng-Secret-7741y"
    viewer = pg.create_role(db, pw, prefix="viewer")
    before = _catalog(pg, db)
    line = _fails(viewer, "thread", "erase", "--thread", "globex:_:s-100", "--yes")
    assert "no DELETE" in line and pw not in line
    assert _catalog(pg, db) == before
    # A server that makes every session read-only: refused before any delete.
    with pg.admin(db) as conn:
        conn.execute(sql.SQL("ALTER DATABASE {} SET default_transaction_read_only = on").format(sql.Identifier(db)))
    line = _fails(url, "thread", "erase", "--thread", "globex:_:s-100", "--yes")
    assert "read-only" in line
    assert _catalog(pg, db) == before


def test_erase_removes_every_table_row_and_vacuums(pg):
    url = pg.new_store()
    db = pg.db_of(url)
    key = "initech:_:s-sub"  # a subgraph namespace too
    res = run("thread", "erase", "--store", url, "--thread", key, "--yes", "--vacuum")
    assert res.code == 0, res.err
    _secret_free(res.out + res.err)
    with pg.admin(db) as conn:
        left = [conn.execute(f"SELECT count(*) FROM {t} WHERE thread_id = %s", (key,)).fetchone()[0] for t in TABLES[:3]]
        others = conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()[0]
        vacuumed = conn.execute("SELECT count(*) FROM pg_stat_user_tables WHERE relname = 'checkpoint_blobs' AND vacuum_count > 0").fetchone()[0]
    assert left == [0, 0, 0] and others == len(scenarios()) - 1
    assert vacuumed == 1 or "VACUUM" in res.out


def test_export_and_decoded_thread_are_the_stored_rows(pg, pg_url):
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    key = "initech:_:s-sub"
    with open_store(parse_location(pg_url)) as st:
        export = st.export_thread(key)
        decoded = st.decoded_thread(key)
        assert st.export_thread("no-such-thread").rows == []
    with pg.admin(pg.db_of(pg_url)) as conn:
        counts = {t: conn.execute(f"SELECT count(*) FROM {t} WHERE thread_id = %s", (key,)).fetchone()[0] for t in TABLES[:3]}
    assert {t: sum(1 for r in export.rows if r.table == t) for t in TABLES[:3]} == counts
    assert all(isinstance(r.data[-1], (bytes, dict)) for r in export.rows)
    assert len(decoded.checkpoints) == counts["checkpoints"] and len(decoded.writes) == counts["checkpoint_writes"]
    with pg.saver(pg_url) as saver:
        for cp in decoded.checkpoints:
            ref = saver.get_tuple({"configurable": {"thread_id": key, "checkpoint_ns": cp.checkpoint_ns, "checkpoint_id": cp.checkpoint_id}})
            assert _norm_value(list(cp.checkpoint["channel_values"].items())) == _norm_value(list(ref.checkpoint["channel_values"].items()))
            assert cp.checkpoint["channel_versions"] == ref.checkpoint["channel_versions"] and cp.metadata == ref.metadata
