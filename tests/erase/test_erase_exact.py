"""``thread erase`` never reaches another thread (issue #12, items 3-6), on stores written by real
graphs through the real savers:

- prefix selections (``--tenant``, ``--sub-tenant``, ``--all-sessions``; ``threads list`` and
  ``migrate`` filters) select exactly the keys starting with the prefix, on a UTF-16 SQLite
  store, a PostgreSQL database under the ICU locale provider, and MongoDB;
- a thread_id stored as a BLOB of the key's bytes is planned, erased and verified;
- an extra table's ``match`` tells sub-tenants apart, or is refused, or says it covers them all;
- the plan counts what the erase deletes (a symlink to a live WAL store; a thread written between
  plan and erase rolls back), and ``--dry-run`` makes the real run's checks.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from symfonic_cli.threadkey import prefix_upper_bound
from tests.support.cli import run
from tests.conftest import backend_for
from tests.support.scenarios import long_thread
from tests.erase.test_erase import _without_root_file_powers, receipt_of, saved

# Keys of tenant "acme" and keys that a byte or collation range for "acme:" would wrongly reach.
INSIDE = ["acme:_:a", "acme:eu:b", "acme:\U0010ffff:c", "acme:_:\u00e9t\u00e9"]
OUTSIDE = ["acme\u013a:_:x", "acme\u4e3a:_:z", "acme;:_:q", "acme\U0010ffff:_:m", "acmf:_:n", "ACME:_:u", "acm:_:v", "acme"]
ALL = INSIDE + OUTSIDE

STORE_KINDS = ["sqlite-utf8", "sqlite-utf16le", "sqlite-utf16be", "postgres-c", "postgres-icu", "mongodb"]


def _sqlite_store(tmp_path: Path, encoding: str) -> str:
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = tmp_path / f"{encoding}.db"
    conn = sqlite3.connect(str(path), check_same_thread=False)
    try:
        # The encoding is fixed when the first table is created: before the saver's setup().
        conn.execute(f"PRAGMA encoding = '{encoding}'")
        saver = SqliteSaver(conn)
        saver.setup()
        for key in ALL:
            long_thread(saver, key, 1)
        assert conn.execute("PRAGMA encoding").fetchone()[0].lower().replace("-", "") == encoding.lower().replace("-", "")
    finally:
        conn.close()
    return str(path)


def _postgres_store(request, icu: bool) -> str:
    backend = backend_for("postgres", request)
    if not icu:
        url = backend.new_store(scenarios=False)
    else:
        name = f"symfonic_icu_{uuid.uuid4().hex[:12]}"
        with backend.admin() as conn:
            conn.execute(f"CREATE DATABASE {name} LOCALE_PROVIDER icu ICU_LOCALE 'en-US' TEMPLATE template0")
        backend.created.append(name)
        url = backend.url(name)
    with backend.saver(url) as saver:
        if icu:
            saver.setup()
        for key in ALL:
            long_thread(saver, key, 1)
    return url


def _mongo_store(request) -> str:
    backend = backend_for("mongodb", request)
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        for key in ALL:
            long_thread(saver, key, 1)
    return url


@pytest.fixture(params=STORE_KINDS)
def prefix_store(request, tmp_path):
    kind = request.param
    if kind.startswith("sqlite"):
        encoding = {"sqlite-utf8": "UTF-8", "sqlite-utf16le": "UTF-16le", "sqlite-utf16be": "UTF-16be"}[kind]
        return "sqlite", _sqlite_store(tmp_path, encoding)
    if kind.startswith("postgres"):
        return "postgres", _postgres_store(request, kind == "postgres-icu")
    return "mongodb", _mongo_store(request)


def _saved_keys(kind: str, url: str) -> set[str]:
    """Every thread key in the store, read by the real saver (independent of the code under test)."""
    from tests.support import backends

    with backends.get(kind).saver(url) as saver:
        return {t.config["configurable"]["thread_id"] for t in saver.list(None)}


def _listed(url: str, *args: str) -> list[str]:
    r = run("threads", "list", "-s", url, "-f", "json", *args)
    assert r.code == 0, r.err
    return [row["key"] for row in json.loads(r.out)]


def test_tenant_selections_are_exact_on_every_store(prefix_store, tmp_path):
    kind, url = prefix_store
    assert _saved_keys(kind, url) == set(ALL)

    assert sorted(_listed(url, "--tenant", "acme")) == sorted(INSIDE)
    assert _listed(url, "--tenant", "acme", "--sub-tenant", "eu") == ["acme:eu:b"]
    assert _listed(url, "--tenant", "acme", "--sub-tenant", "\U0010ffff") == ["acme:\U0010ffff:c"]
    assert _listed(url, "--tenant", "acme\U0010ffff") == ["acme\U0010ffff:_:m"]
    assert _listed(url, "--tenant", "acme;") == ["acme;:_:q"]

    target = tmp_path / "copy.db"
    m = run("migrate", "--from", url, "--to", str(target), "--tenant", "acme", "--init-target", "-f", "json")
    assert m.code == 0, m.err
    assert sorted(t["thread"] for t in json.loads(m.out)["threads"]) == sorted(INSIDE)
    assert _saved_keys("sqlite", str(target)) == set(INSIDE)

    plan = run("thread", "erase", "-s", url, "--tenant", "acme", "--all-sessions", "--dry-run")
    assert plan.code == 0, plan.err
    assert f"{len(INSIDE)} of {len(INSIDE)} thread(s)" in plan.out
    r = run("thread", "erase", "-s", url, "--tenant", "acme", "--all-sessions", "--yes")
    assert r.code == 0, r.err
    assert sorted(t["key"] for t in receipt_of(r.out)["threads"]) == sorted(INSIDE)
    assert _saved_keys(kind, url) == set(OUTSIDE)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(
    st.text(st.characters(codec="utf-8"), min_size=1, max_size=4) | st.sampled_from(["\U0010ffff", "a\U0010ffff", "\ud7ff", "x\ud7ff\U0010ffff"]),
    st.text(st.characters(codec="utf-8"), max_size=6),
)
def test_prefix_upper_bound_is_exact_in_code_point_order(prefix, tail):
    hi = prefix_upper_bound(prefix)
    for s in (prefix + tail, tail, tail + prefix, prefix[:-1] + tail):
        in_range = s >= prefix and (hi is None or s < hi)
        assert in_range == s.startswith(prefix), (prefix, s, hi)
    if hi is not None:
        hi.encode("utf-8")  # never a surrogate: the bound must go to the database
        assert not hi.startswith(prefix)


def test_a_nocase_thread_id_column_does_not_fold_keys(tmp_path):
    """A crafted SQLite file whose thread_id columns are declared COLLATE NOCASE: keys still
    compare exactly (erasing acme:_:bob never reaches ACME:_:BOB)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    # The saver itself would fold the keys while writing into such tables: the rows are written
    # by a real graph into the saver's own tables, then copied into the crafted ones.
    src = tmp_path / "written.db"
    conn = sqlite3.connect(str(src), check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        for key in ("acme:_:bob", "ACME:_:BOB", "Acme:_:x"):
            long_thread(saver, key, 1)
    finally:
        conn.close()
    path = tmp_path / "nocase.db"
    conn = sqlite3.connect(str(path))
    try:
        conn.executescript(
            "CREATE TABLE checkpoints (thread_id TEXT COLLATE NOCASE NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',"
            " checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, metadata BLOB,"
            " PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));"
            "CREATE TABLE writes (thread_id TEXT COLLATE NOCASE NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',"
            " checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, task_path TEXT NOT NULL DEFAULT '', idx INTEGER NOT NULL,"
            " channel TEXT NOT NULL, type TEXT, value BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));"
        )
        conn.execute("ATTACH DATABASE ? AS src", (str(src),))
        conn.execute("INSERT INTO checkpoints SELECT * FROM src.checkpoints")
        conn.execute("INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)"
                     " SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value FROM src.writes")
        conn.commit()
    finally:
        conn.close()
    url = str(path)
    assert _listed(url, "--tenant", "acme") == ["acme:_:bob"]
    r = run("thread", "erase", "-s", url, "--tenant", "acme", "--all-sessions", "--yes")
    assert r.code == 0, r.err
    assert [t["key"] for t in receipt_of(r.out)["threads"]] == ["acme:_:bob"]
    assert _saved_keys("sqlite", url) == {"ACME:_:BOB", "Acme:_:x"}
    r = run("thread", "erase", "-s", url, "--thread", "ACME:_:BOB", "--yes")
    assert r.code == 0 and receipt_of(r.out)["threads"][0]["status"] == "erased"
    assert _saved_keys("sqlite", url) == {"Acme:_:x"}


# -- a thread_id stored as a BLOB --------------------------------------------------------------


def _add_blob_rows(path: str, key: str, as_key: str | None = None) -> int:
    """Copy every row of ``key`` with thread_id stored as a BLOB (of ``as_key``'s UTF-8 bytes)."""
    conn = sqlite3.connect(path)
    try:
        tid = "CAST(thread_id AS BLOB)" if as_key is None else "CAST(? AS BLOB)"
        params = (key,) if as_key is None else (as_key, key)
        n = conn.execute(
            f"INSERT INTO checkpoints SELECT {tid}, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
            "FROM checkpoints WHERE thread_id = ?", params,
        ).rowcount
        n += conn.execute(
            f"INSERT INTO writes SELECT {tid}, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path "
            "FROM writes WHERE thread_id = ?", params,
        ).rowcount
        conn.commit()
        assert conn.execute("SELECT count(*) FROM checkpoints WHERE typeof(thread_id) = 'blob'").fetchone()[0] > 0
        return n
    finally:
        conn.close()


def _rows_of(path: str, key: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return sum(
            conn.execute(f"SELECT count(*) FROM {t} WHERE CAST(thread_id AS TEXT) = ?", (key,)).fetchone()[0]
            for t in ("checkpoints", "writes")
        )
    finally:
        conn.close()


def test_blob_thread_id_rows_are_planned_erased_and_verified(sqlite_store):
    path = str(sqlite_store)
    key = "globex:_:s-100"
    text_rows = _rows_of(path, key)
    blob_rows = _add_blob_rows(path, key)
    _add_blob_rows(path, "globex:_:s-100", as_key="globex:_:blob-only")
    assert _rows_of(path, key) == text_rows + blob_rows

    plan = run("thread", "erase", "-s", path, "--thread", key, "--dry-run")
    assert plan.code == 0, plan.err
    assert f"{key}: {text_rows + blob_rows} row(s)" in plan.out

    r = run("thread", "erase", "-s", path, "--thread", key, "--yes")
    assert r.code == 0, r.err
    (t,) = receipt_of(r.out)["threads"]
    assert t["status"] == "erased" and sum(t["rows_deleted"].values()) == text_rows + blob_rows
    assert t["verification"] == {"checked": True, "rows_remaining": 0, "ok": True}
    assert _rows_of(path, key) == 0

    # Text and BLOB rows of one key are one thread in the listing.
    listed = json.loads(run("threads", "list", "-s", path, "-f", "json").out)
    s101 = [t for t in listed if t["key"] == "globex:_:s-101"]
    _add_blob_rows(path, "globex:_:s-101")
    merged = [t for t in json.loads(run("threads", "list", "-s", path, "-f", "json").out) if t["key"] == "globex:_:s-101"]
    assert len(merged) == 1 and merged[0]["checkpoints"] == 2 * s101[0]["checkpoints"]
    assert merged[0]["last_activity"] == s101[0]["last_activity"]
    # A thread held only in BLOB rows is listed under its key and found by a tenant selection.
    assert "globex:_:blob-only" in _listed(path, "--tenant", "globex")
    assert "globex:_:blob-only" in _listed(path)
    dry = run("thread", "erase", "-s", path, "--tenant", "globex", "--all-sessions", "--dry-run")
    assert "globex:_:blob-only: " in dry.out and "globex:_:s-101: " in dry.out
    r = run("thread", "erase", "-s", path, "--thread", "globex:_:blob-only", "--yes")
    assert r.code == 0 and receipt_of(r.out)["threads"][0]["status"] == "erased"
    assert _rows_of(path, "globex:_:blob-only") == 0
    assert _rows_of(path, "globex:_:s-101") > 0


# -- extra tables: sub-tenants told apart --------------------------------------------------------

TOKENS_COLS = ("tenant_id", "sub_id", "session_id", "token")


def _tokens(kind: str, url: str, rows: list[tuple] | None = None) -> list[tuple]:
    """Create and fill the deployment's pause_tokens table (rows given), or read it back sorted."""
    if kind == "sqlite":
        conn = sqlite3.connect(url)
        try:
            if rows is not None:
                conn.execute("CREATE TABLE pause_tokens (tenant_id TEXT, sub_id TEXT, session_id TEXT, token TEXT)")
                conn.executemany("INSERT INTO pause_tokens VALUES (?, ?, ?, ?)", rows)
                conn.commit()
            got = conn.execute("SELECT * FROM pause_tokens").fetchall()
        finally:
            conn.close()
    elif kind == "postgres":
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            if rows is not None:
                conn.execute("CREATE TABLE pause_tokens (tenant_id text, sub_id text, session_id text, token text)")
                with conn.cursor() as cur:
                    cur.executemany("INSERT INTO pause_tokens VALUES (%s, %s, %s, %s)", rows)
            got = [tuple(r) for r in conn.execute("SELECT * FROM pause_tokens").fetchall()]
    else:
        from pymongo import MongoClient

        from tests.support.mongo_server import database_of

        client = MongoClient(url)
        try:
            coll = client[database_of(url)]["pause_tokens"]
            if rows is not None:
                coll.insert_many([dict(zip(TOKENS_COLS, r)) for r in rows])
            got = [tuple(d.get(c) for c in TOKENS_COLS) for d in coll.find()]
        finally:
            client.close()
    return sorted(got, key=repr)


def _config(tmp_path: Path, url: str, entry: str) -> dict[str, str]:
    config = tmp_path / "config.toml"
    config.write_text(f"[stores.prod]\nurl = {json.dumps(url)}\nerase_extra = [\n  {entry},\n]\n")
    return {"SYMFONIC_CONFIG": str(config)}


# Every kind with the default (NULL); the string forms of a missing sub-tenant on SQLite.
@pytest.mark.parametrize(
    "kind, missing_sub", [("sqlite", "null"), ("postgres", "null"), ("mongodb", "null"), ("sqlite", ""), ("sqlite", "_")]
)
def test_extra_table_rows_of_another_sub_tenant_survive(request, tmp_path, kind, missing_sub):
    any_kind = backend_for(kind, request)
    url = any_kind.new_store()
    none = None if missing_sub == "null" else missing_sub
    rows = [("acme", none, "s-001", "tok-main"), ("acme", "eu", "s-001", "tok-eu"), ("acme", none, "s-002", "tok-other")]
    _tokens(any_kind.kind, url, rows)
    sub = "" if missing_sub == "null" else f", missing_sub = {json.dumps(missing_sub)}"
    env = _config(tmp_path, url, '{table = "pause_tokens", match = {tenant_id = "tenant", sub_id = "sub", session_id = "session"}' + sub + "}")

    plan = run("thread", "erase", "-s", "prod", "--thread", "acme:_:s-001", "--dry-run", env=env)
    assert plan.code == 0, plan.err
    assert "pause_tokens 1," in plan.out
    r = run("thread", "erase", "-s", "prod", "--thread", "acme:_:s-001", "--yes", env=env)
    assert r.code == 0, r.err
    assert receipt_of(r.out)["threads"][0]["rows_deleted"]["pause_tokens"] == 1
    assert _tokens(any_kind.kind, url) == sorted([rows[1], rows[2]], key=repr)
    assert saved(any_kind, url, "acme:_:s-001")[0] == 0


def test_extra_match_without_sub_tenant_is_refused_or_declared(any_kind, tmp_path):
    url = any_kind.new_store()
    rows = [("acme", None, "s-001", "tok-main"), ("acme", "eu", "s-001", "tok-eu"), ("globex", None, "s-001", "tok-g")]
    _tokens(any_kind.kind, url, rows)
    loose = '{table = "pause_tokens", match = {tenant_id = "tenant", session_id = "session"}'

    refused = run("thread", "erase", "-s", "prod", "--thread", "acme:_:s-001", "--yes", env=_config(tmp_path, url, loose + "}"))
    assert refused.code == 2 and "sub-tenants" in refused.err and "all_sub_tenants" in refused.err
    assert "Traceback" not in refused.err
    assert _tokens(any_kind.kind, url) == sorted(rows, key=repr)
    assert saved(any_kind, url, "acme:_:s-001")[0] > 0

    env = _config(tmp_path, url, loose + ", all_sub_tenants = true}")
    plan = run("thread", "erase", "-s", "prod", "--thread", "acme:_:s-001", "--dry-run", env=env)
    assert plan.code == 0, plan.err
    assert "pause_tokens 2 (all sub-tenants of this tenant and session)" in plan.out
    r = run("thread", "erase", "-s", "prod", "--thread", "acme:_:s-001", "--yes", env=env)
    assert r.code == 0, r.err
    assert _tokens(any_kind.kind, url) == [rows[2]]


@pytest.mark.parametrize(
    "match, message",
    [
        ('{tenant_id = "tenant"}', "identify one thread"),
        ('{tenant_id = "tenant", sub_id = "sub"}', "identify one thread"),
        ('{sub_id = "sub", session_id = "session"}', "identify one thread"),
        ('{tenant_id = "tenant", sub_id = "sub", session_id = "session"}, missing_sub = "NULL"', "missing_sub"),
        ('{tenant_id = "tenant", session_id = "session"}, missing_sub = ""', "missing_sub"),
        ('{tenant_id = "tenant", sub_id = "sub", session_id = "session"}, all_sub_tenants = true', "all_sub_tenants"),
        ('{tenant_id = "tenant", session_id = "session"}, all_sub_tenants = "yes"', "all_sub_tenants"),
        ('{a = "tenant", b = "tenant", c = "sub", d = "session"}', "mapped once"),
    ],
)
def test_extra_mappings_that_cannot_name_one_thread_are_refused(sqlite_store, tmp_path, match, message):
    env = _config(tmp_path, str(sqlite_store), '{table = "pause_tokens", match = ' + match + "}")
    for extra in ((), ("--dry-run",)):
        r = run("thread", "erase", "-s", "prod", "--thread", "acme:_:s-001", "--yes", *extra, env=env)
        assert r.code == 2 and message in r.err and r.err.count("\n") <= 2, r.err
    assert saved(backend_for("sqlite", None), str(sqlite_store), "acme:_:s-001")[0] > 0


# -- the plan is made from the data the erase deletes ---------------------------------------------


def _plan_counts(out: str, key: str) -> dict[str, int]:
    line = next(line for line in out.splitlines() if line.startswith(f"  {key}: "))
    inner = line.split(" row(s) (", 1)[1].split(")", 1)[0]
    return {name: int(n) for name, n in (part.rsplit(" ", 1) for part in inner.split(", "))}


def test_symlink_to_a_live_wal_store_plans_what_it_erases(tmp_path):
    from langgraph.checkpoint.sqlite import SqliteSaver

    from tests.support.scenarios import write_scenarios

    data = tmp_path / "data"
    links = tmp_path / "links"
    data.mkdir()
    links.mkdir()
    target = data / "live.db"
    link = links / "store.db"
    link.symlink_to(target)
    app = sqlite3.connect(str(target), check_same_thread=False)  # the application keeps it open
    try:
        write_scenarios(SqliteSaver(app), ["globex:_:s-100", "globex:_:s-101"])
        assert Path(f"{target}-wal").stat().st_size > 0 and Path(f"{target}-shm").exists()
        assert not Path(f"{link}-wal").exists()

        plan = run("thread", "erase", "-s", str(link), "--thread", "globex:_:s-100", "--dry-run")
        assert plan.code == 0, plan.err
        planned = _plan_counts(plan.out, "globex:_:s-100")
        assert sum(planned.values()) > 0
        assert not Path(f"{link}-wal").exists()  # nothing created beside the link

        r = run("thread", "erase", "-s", str(link), "--thread", "globex:_:s-100", "--yes")
        assert r.code == 0, r.err
        (t,) = receipt_of(r.out)["threads"]
        assert t["rows_deleted"] == planned and t["verification"]["ok"]
        assert _listed(str(link)) == ["globex:_:s-101"]
    finally:
        app.close()


def test_thread_written_between_plan_and_erase_is_rolled_back(any_kind):
    from symfonic_cli.errors import StoreError
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    url = any_kind.new_store()
    key = "globex:_:s-101"
    before = saved(any_kind, url, key)
    store = open_store(parse_location(url), writable=True)
    try:
        store.erase_prepare(())
        plan = store.erase_plan(key, ())
        with any_kind.saver(url) as saver:  # the agent writes the thread again meanwhile
            long_thread(saver, key, 1)
        grown = saved(any_kind, url, key)
        assert grown[0] > before[0]
        with pytest.raises(StoreError, match="changed since the plan"):
            store.erase_thread(key, (), expected=plan.rows)
        assert saved(any_kind, url, key) == grown  # rolled back (or, without transactions, never begun)
        again = store.erase_plan(key, ())
        assert store.erase_thread(key, (), expected=again.rows) == again.rows
    finally:
        store.close()
    assert saved(any_kind, url, key)[0] == 0


def test_dry_run_exits_4_on_a_missing_declared_column_as_the_real_run_does(any_kind, tmp_path):
    url = any_kind.new_store()
    _tokens(any_kind.kind, url, [("acme", None, "s-001", "tok-main")])
    env = _config(tmp_path, url, '{table = "pause_tokens", match = {tenant_id = "tenant", sub_id = "sub", no_such_column = "session"}}')
    if any_kind.kind == "mongodb":
        # documents have no declared columns; a missing collection is the check there
        env = _config(tmp_path, url, '{table = "no_such_collection", column = "thread_id"}')
    for extra in (("--dry-run",), ("--yes",)):
        r = run("thread", "erase", "-s", "prod", "--thread", "acme:_:s-001", *extra, env=env)
        assert r.code == 4, (extra, r.out, r.err)
        assert ("no_such_column" in r.err or "no_such_collection" in r.err) and r.err.count("\n") == 1
        assert "dry run: nothing deleted" not in r.out
    assert saved(any_kind, url, "acme:_:s-001")[0] > 0


def test_dry_run_exits_4_on_a_read_only_file_as_the_real_run_does(sqlite_master, tmp_path):
    import shutil

    path = tmp_path / "store.db"
    shutil.copyfile(sqlite_master, path)
    os.chmod(path, 0o444)
    before = path.read_bytes()
    try:
        codes = []
        for mode in ("--dry-run", "--yes"):
            proc = subprocess.run(
                [sys.executable, "-m", "symfonic_cli", "thread", "erase", "-s", str(path), "--thread", "globex:_:s-100", mode],
                capture_output=True, text=True, timeout=60, preexec_fn=_without_root_file_powers,
            )
            codes.append(proc.returncode)
            assert "read-only" in proc.stderr or "not writable" in proc.stderr, proc.stderr
            assert "dry run: nothing deleted" not in proc.stdout
    finally:
        os.chmod(path, 0o644)
    assert codes == [4, 4]
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["store.db"]


def test_dry_run_exits_4_without_delete_privilege_as_the_real_run_does(request):
    backend = backend_for("postgres", request)
    url = backend.new_store()
    reader = backend.create_role(backend.db_of(url), "pw-reader", grant=("SELECT",))
    for mode in ("--dry-run", "--yes"):
        r = run("thread", "erase", "-s", reader, "--thread", "globex:_:s-100", mode)
        assert r.code == 4, (mode, r.err)
        assert "no DELETE on" in r.err and "pw-reader" not in r.err
    assert saved(backend, url, "globex:_:s-100")[0] > 0


@pytest.mark.parametrize("icu", [False, True])
def test_postgres_prefix_uses_the_index_where_the_range_is_exact(request, icu):
    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    url = _postgres_store(request, icu)
    store = open_store(parse_location(url))
    try:
        assert store._c_collation is not icu
        where, params = store._prefix_where("acme:")
        with store.conn.transaction():
            store.conn.execute("SET LOCAL enable_seqscan = off")
            plan = "\n".join(r[0] for r in store.conn.execute(f"EXPLAIN SELECT thread_id FROM checkpoints {where}", params))
    finally:
        store.close()
    # Under C the primary key serves the key range; under ICU only an exact comparison is made.
    if icu:
        assert "starts_with" in plan and "Index Cond" not in plan, plan
    else:
        assert "Index Cond" in plan and "thread_id >=" in plan and "Seq Scan" not in plan, plan


def test_postgres_case_insensitive_column_collation_does_not_fold_keys(request):
    """thread_id columns altered to a nondeterministic (case-insensitive) ICU collation after the
    saver wrote the threads: erasing acme:_:bob never reaches ACME:_:BOB."""
    import psycopg

    from tests.support.pg_server import case_twins_under_a_folding_collation

    url = case_twins_under_a_folding_collation(backend_for("postgres", request))

    assert _listed(url, "--tenant", "acme") == ["acme:_:bob"]
    plan = run("thread", "erase", "-s", url, "--thread", "acme:_:bob", "--dry-run")
    r = run("thread", "erase", "-s", url, "--thread", "acme:_:bob", "--yes")
    assert r.code == 0, r.err
    (t,) = receipt_of(r.out)["threads"]
    assert t["rows_deleted"] == _plan_counts(plan.out, "acme:_:bob") and t["verification"]["ok"]
    with psycopg.connect(url, autocommit=True) as conn:
        left = {r[0] for r in conn.execute('SELECT DISTINCT thread_id COLLATE "C" FROM checkpoints')}
        blobs = {r[0] for r in conn.execute('SELECT DISTINCT thread_id COLLATE "C" FROM checkpoint_blobs')}
    assert left == {"ACME:_:BOB"} and blobs == {"ACME:_:BOB"}



def _command_listener():
    from pymongo import monitoring

    class Commands(monitoring.CommandListener):
        """pymongo command monitoring: every command the clients created after registration send."""

        def __init__(self) -> None:
            self.on = False
            self.seen: list[dict] = []

        def started(self, event) -> None:
            if self.on:
                self.seen.append(dict(event.command))

        def succeeded(self, event) -> None:
            pass

        def failed(self, event) -> None:
            pass

    return Commands()


def test_mongodb_selections_and_deletes_ask_for_the_simple_collation(request):
    """A collection's default collation (case-insensitive, say) would fold keys in ranges and
    equalities; every thread-selecting aggregate and every delete asks for the simple collation
    (byte order). The test server ignores collection collations, so what is sent is checked."""
    from pymongo import monitoring

    backend = backend_for("mongodb", request)
    backend.new_store()  # the scenario master exists
    db = backend.new_database()
    for name in backend.client[backend._master].list_collection_names():
        # With a default collation the simple one must be named (without one it is the default).
        backend.client[db].create_collection(name, collation={"locale": "en", "strength": 2})
    backend._copy(backend._master, db)
    url = backend.url(db)
    commands = _command_listener()
    monitoring.register(commands)
    commands.on = True
    try:
        assert _listed(url, "--tenant", "acme")
        r = run("thread", "erase", "-s", url, "--tenant", "acme", "--all-sessions", "--yes")
        assert r.code == 0, r.err
    finally:
        commands.on = False
    deletes = [c for c in commands.seen if "delete" in c]
    assert deletes and all(d["collation"] == {"locale": "simple"} for c in deletes for d in c["deletes"])
    selecting = [c for c in commands.seen if "aggregate" in c and any("thread_id" in st.get("$match", {}) for st in c["pipeline"])]
    assert selecting
    assert [c["pipeline"] for c in selecting if c.get("collation") != {"locale": "simple"}] == []
