"""Hostile arguments, locations and processes (issue #13, items 2 and 4 to 7).

Real stores written by real graphs through the real savers; every store kind where it applies.
"""

from __future__ import annotations

import json
import math
import operator
from typing import Annotated, TypedDict

import pytest

from tests.support import backends
from tests.support.cli import run
from tests.conftest import backend_for

# -- numeric options: a documented range, exit 2 naming it (README "Numeric options")

OUT_OF_RANGE = [
    (["threads", "list", "--limit", "99999999999999999999999"], "0<=x<=1000000000"),
    (["threads", "list", "--limit", "-1"], "0<=x<=1000000000"),
    (["transcript", "show", "-t", "acme:_:s-001", "--limit", "1000000001"], "0<=x<=1000000000"),
    (["transcript", "show", "-t", "acme:_:s-001", "--index", "-99999999999999999999999"], "-1000000000<=x<=1000000000"),
    (["transcript", "show", "-t", "acme:_:s-001", "--index", "1000000001"], "-1000000000<=x<=1000000000"),
    (["compat", "report", "--current-format", "99999999999999999999"], "1<=x<=1000000"),
    (["compat", "report", "--current-format", "0"], "1<=x<=1000000"),
    (["compat", "report", "-t", "acme:_:s-001", "--grace", "9" * 30 + "d"], "0s to 36500d"),
    (["compat", "report", "-t", "acme:_:s-001", "--grace", "36501d"], "0s to 36500d"),
    (["compat", "report", "-t", "acme:_:s-001", "--grace", "9" * 400], "0s to 36500d"),
    (["thread", "erase", "-t", "acme:_:s-001", "--dry-run", "--grace", "9999999999999d"], "0s to 36500d"),
    (["thread", "erase", "-t", "acme:_:s-001", "--dry-run", "--grace", "9" * 400 + "s"], "0s to 36500d"),
    (["--connect-timeout", "nan", "threads", "list"], "0.1<=x<=3600.0"),
    (["--connect-timeout", "inf", "threads", "list"], "0.1<=x<=3600.0"),
    (["--connect-timeout", "-inf", "store", "info"], "0.1<=x<=3600.0"),
    (["--connect-timeout", "1e400", "threads", "list"], "0.1<=x<=3600.0"),
    (["--connect-timeout", "3601", "threads", "list"], "0.1<=x<=3600.0"),
    (["--connect-timeout", "0.01", "threads", "list"], "0.1<=x<=3600.0"),
]


@pytest.mark.parametrize("argv,expected_range", OUT_OF_RANGE, ids=[" ".join(a)[:60] for a, _ in OUT_OF_RANGE])
def test_numeric_options_out_of_range_are_usage_errors_naming_the_range(sqlite_store, argv, expected_range):
    before = sqlite_store.read_bytes()
    r = run(*argv, "--store", str(sqlite_store))
    assert r.code == 2, (argv, r.code, r.err)
    assert r.out == ""
    assert expected_range in r.err and r.err.count("\n") == 1, r.err
    assert "Traceback" not in r.err and "unexpected" not in r.err
    assert sqlite_store.read_bytes() == before


def test_migrate_numeric_options_and_environment_are_checked(sqlite_store, tmp_path):
    target = str(tmp_path / "t.db")
    for jobs in ("0", "65", "99999999999999999999999", "nan"):
        r = run("migrate", "--from", str(sqlite_store), "--to", target, "--all", "--jobs", jobs)
        assert r.code == 2 and ("1<=x<=64" in r.err or "not a valid integer" in r.err), r.err
    for value in ("nan", "inf", "-1", "1e999", "3600.01"):
        r = run("threads", "list", "--store", str(sqlite_store), env={"SYMFONIC_CONNECT_TIMEOUT": value})
        assert r.code == 2 and "0.1<=x<=3600.0" in r.err, (value, r.err)
    # The ends of each range are accepted.
    assert run("threads", "list", "--store", str(sqlite_store), "--limit", "1000000000").code == 0
    assert run("--connect-timeout", "3600", "store", "info", "--store", str(sqlite_store)).code == 0
    assert run("transcript", "show", "-s", str(sqlite_store), "-t", "acme:_:s-001", "--index", "-1000000000").code == 0
    assert run("compat", "report", "-s", str(sqlite_store), "-t", "acme:_:s-001", "--grace", "36500d").code == 0
    assert run("compat", "report", "-s", str(sqlite_store), "--current-format", "1000000").code == 0


# -- migrate: NaN equals NaN, byte-identical rows are never a conflict

NAN_LIST = "nan:_:in-a-list"  # NaN and -0.0 inside a list: a blob on every kind
NAN_JSON = "nan:_:in-metadata"  # NaN as a plain channel value and in metadata


class ScoreState(TypedDict, total=False):
    log: Annotated[list, operator.add]
    score: float


def _score_graph(saver, score):
    from langgraph.graph import START, StateGraph

    def measure(state):
        out = {"log": [float("nan"), -0.0, 0.0, float("inf")]}
        if score is not None:
            out["score"] = score
        return out

    g = StateGraph(ScoreState)
    g.add_node("measure", measure)
    g.add_edge(START, "measure")
    return g.compile(checkpointer=saver)


def write_nan_threads(kind: str, saver) -> None:
    _score_graph(saver, None).invoke({"log": ["start"]}, {"configurable": {"thread_id": NAN_LIST}})
    config = {"configurable": {"thread_id": NAN_JSON}, "metadata": {"score": float("nan"), "zero": -0.0}}
    graph = _score_graph(saver, float("nan"))
    if kind == "postgres":
        # PostgresSaver keeps metadata and plain float channel values in JSONB, which has no NaN:
        # the application itself cannot write this thread.
        import psycopg

        with pytest.raises(psycopg.DataError):
            graph.invoke({"log": ["start"]}, config)
        return
    graph.invoke({"log": ["start"]}, config)


_nan_sources: dict[str, str] = {}


def nan_source(backend) -> str:
    if backend.kind not in _nan_sources:
        url = backend.new_store(scenarios=False)
        with backend.saver(url) as saver:
            write_nan_threads(backend.kind, saver)
        _nan_sources[backend.kind] = url
    return _nan_sources[backend.kind]


PAIRS = [(a, b) for a in backends.KINDS for b in backends.KINDS]


def _doc(r) -> dict:
    assert r.out, r.err
    return json.loads(r.out)


@pytest.mark.parametrize("pair", PAIRS, ids=[f"{a}-to-{b}" for a, b in PAIRS])
def test_nan_copies_verify_and_a_rerun_is_no_conflict(pair, request):
    src_kind, dst_kind = pair
    src = nan_source(backend_for(src_kind, request))
    dst = backend_for(dst_kind, request).new_store(scenarios=False)
    keys = [NAN_LIST] if src_kind == "postgres" else [NAN_LIST, NAN_JSON]
    sel = [a for k in keys for a in ("--thread", k)]

    first = run("migrate", "--from", src, "--to", dst, *sel, "-f", "json")
    threads = {t["thread"]: t for t in _doc(first)["threads"]}
    assert threads[NAN_LIST]["status"] == "copied" and threads[NAN_LIST]["verified"] is True, threads
    refused = NAN_JSON in keys and dst_kind == "postgres"
    if NAN_JSON in keys:
        t = threads[NAN_JSON]
        if refused:
            assert t["status"] == "failed" and t["checkpoints_copied"] == 0, t
            assert "NaN" in t["message"] and "JSONB" in t["message"] and "'score'" in t["message"], t
        else:
            assert t["status"] == "copied" and t["verified"] is True, t
    assert first.code == (7 if refused else 0), first.err
    assert "Traceback" not in first.err

    again = run("migrate", "--from", src, "--to", dst, *sel, "-f", "json")
    threads = {t["thread"]: t for t in _doc(again)["threads"]}
    for key in keys:
        if refused and key == NAN_JSON:
            assert threads[key]["status"] == "failed"
            continue
        assert (threads[key]["status"], threads[key]["verified"]) == ("skipped", True), threads[key]
    assert again.code == (7 if refused else 0), again.err

    check = run("migrate", "--verify-only", "--from", src, "--to", dst, "--thread", NAN_LIST, "-f", "json")
    assert check.code == 0 and _doc(check)["threads"][0]["verified"] is True, check.out

    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    with open_store(parse_location(dst)) as st:
        values = st.decoded_thread(NAN_LIST).checkpoints[-1].checkpoint["channel_values"]["log"]
        assert math.isnan(values[1]) and math.copysign(1, values[2]) == -1 and values[4] == math.inf
        if refused:
            assert st.thread_summary(NAN_JSON) is None  # nothing of it written
        elif NAN_JSON in keys:
            last = st.decoded_thread(NAN_JSON).checkpoints[-1]
            assert math.isnan(last.metadata["score"]) and math.isnan(last.checkpoint["channel_values"]["score"])


def test_equality_is_same_bytes_same_value():
    from symfonic_cli.migrate.compare import _Equal

    eq = _Equal()
    nan = float("nan")
    assert eq(float("nan"), float("nan")) and eq([1, {"x": float("nan")}], (1, {"x": nan}))
    assert not eq(nan, 0.0) and not eq(0.0, nan)
    assert not eq(-0.0, 0.0) and eq(-0.0, -0.0) and eq(0.0, 0.0)
    assert eq(math.inf, math.inf) and not eq(math.inf, -math.inf)
    assert _Equal(signed_zero=False)(-0.0, 0.0)  # a PostgreSQL side: JSONB has no negative zero
    assert not eq(True, 1.0) and not eq(1.5, 2.5)


# -- parallel migrate: workers die with their parent


def _children(pid: int) -> list[int]:
    import os

    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    stat = fh.read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except OSError:
        return False


def _wait(predicate, timeout: float, what: str):
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


@pytest.mark.parametrize("src_kind", ["sqlite", "postgres"])
def test_parallel_workers_die_with_a_killed_parent_and_a_rerun_completes(src_kind, request, tmp_path):
    import os
    import signal
    import subprocess
    import sys

    pg = backend_for("postgres", request)
    src = backend_for(src_kind, request).new_store(scenarios=True)
    dst = pg.new_store(scenarios=False)
    db = pg.db_of(dst)
    env = {**os.environ, "SYMFONIC_TEST_MIGRATE_KILL": "before-commit:2:stall"}
    env = {k: v for k, v in env.items() if not k.startswith("SYMFONIC_") or k.startswith(("SYMFONIC_TEST_", "SYMFONIC_REQUIRE_"))}
    proc = subprocess.Popen(
        [sys.executable, "-m", "symfonic_cli", "migrate", "--from", src, "--to", dst, "--all", "--jobs", "2"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )

    def sessions(stalled: bool = False) -> list[int]:
        with pg.admin() as conn:
            rows = conn.execute(
                "SELECT pid, state = 'idle in transaction' AND now() - state_change > interval '1 second' "
                "FROM pg_stat_activity WHERE datname = %s AND application_name = 'symfonic'", (db,)
            ).fetchall()
        return [pid for pid, held in rows if held or not stalled]

    def committed() -> int:
        with pg.admin(db) as conn:
            return conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()[0]

    try:
        # Both workers stop inside a thread's transaction (held there for over a second), after
        # committing one thread each.
        _wait(lambda: committed() == 2 and len(sessions(stalled=True)) == 2, 60, "two workers inside a transaction")
        workers = [w for w in _children(proc.pid) if _alive(w)]
        assert len(workers) >= 2, workers  # the two workers (and multiprocessing's resource tracker)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        _wait(lambda: not any(_alive(w) for w in workers), 5, "the workers to end")
        _wait(lambda: not sessions(), 5, "their PostgreSQL sessions to end")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for w in _children(proc.pid):
            os.kill(w, signal.SIGKILL)

    # Each worker had committed one thread; the two they were writing were rolled back.
    assert committed() == 2
    again = run("migrate", "--from", src, "--to", dst, "--all", "--jobs", "2", "-f", "json")
    assert again.code == 0, again.err
    doc = json.loads(again.out)
    assert doc["totals"]["verified"] == doc["totals"]["threads"] > 2
    assert {t["status"] for t in doc["threads"]} == {"copied", "skipped"}


def test_a_worker_ignores_no_sigterm_and_notices_an_orphaning(tmp_path):
    """The watcher ends a worker whose parent is gone even without the Linux death signal."""
    import subprocess
    import sys

    code = (
        "import os, sys, time\n"
        "from symfonic_cli.migrate import workers as migration\n"
        "migration.PR_SET_PDEATHSIG = 0  # an unknown prctl option: only the watcher is left\n"
        "parent = os.getpid()\n"
        "pid = os.fork()\n"
        "if pid:\n"
        "    print(pid, flush=True); os._exit(0)\n"
        "migration._die_with_parent(parent)\n"
        "time.sleep(5)\n"  # the parent exits at once: the watcher ends this process first
        "print('still here', flush=True)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    child = int(proc.stdout.split()[0])
    _wait(lambda: not _alive(child), 3, "the orphaned worker to end")
    assert "still here" not in proc.stdout


# -- crashed WAL stores: inspected without changing a byte

APP = """
import sqlite3, sys, time
from langgraph.checkpoint.sqlite import SqliteSaver
from tests.support.scenarios import write_scenarios
conn = sqlite3.connect(sys.argv[1], check_same_thread=False)
saver = SqliteSaver(conn)
saver.setup()
conn.execute("PRAGMA wal_autocheckpoint = 0")  # every write stays in the -wal
write_scenarios(saver)
print("ready", flush=True)
time.sleep(600)
"""


def _hashes(path) -> dict[str, str]:
    import hashlib
    from pathlib import Path

    out = {}
    for suffix in ("", "-wal", "-shm", "-journal"):
        p = Path(f"{path}{suffix}")
        out[suffix or "db"] = hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else None
    return out


def _inspections(path: str, keys: list[str], empty_target: str) -> list[list[str]]:
    s = ["--store", path]
    cmds = [["threads", "list", *s, "-f", "json"], ["store", "info", *s, "-f", "json"], ["compat", "report", *s, "-f", "json"]]
    for key in keys:
        cmds += [
            ["transcript", "show", *s, "-t", key, "-f", "json"],
            ["compat", "report", *s, "-t", key, "-f", "json"],
            ["compat", "show", *s, "-t", key, "-f", "json"],
            ["thread", "erase", *s, "-t", key, "--dry-run"],
        ]
    cmds.append(["migrate", "--from", path, "--to", empty_target, "--all", "--dry-run", "-f", "json"])
    return cmds


def test_a_crashed_wal_store_is_inspected_without_changing_any_file(tmp_path, request):
    import os
    import signal
    import subprocess
    import sys

    from tests.support.scenarios import scenarios

    path = str(tmp_path / "app.db")
    sq = backend_for("sqlite", request)
    empty = sq.new_store(scenarios=False)
    app = subprocess.Popen([sys.executable, "-c", APP, path], stdout=subprocess.PIPE, text=True,
                           cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    try:
        assert app.stdout.readline().strip() == "ready"
        assert os.path.getsize(path + "-wal") > 0 and os.path.exists(path + "-shm")
        keys = [sc.key for sc in scenarios()]
        commands = _inspections(path, keys, empty)
        live = [run(*argv) for argv in commands]
        assert all(r.code == 0 for r in live), [(c, r.err) for c, r in zip(commands, live) if r.code]
    finally:
        app.send_signal(signal.SIGKILL)
        app.wait()
    before = _hashes(path)
    assert before["-wal"] and before["-shm"]
    for argv, then in zip(commands, live):
        now = run(*argv)
        assert (now.code, now.out, now.err) == (then.code, then.out, then.err), argv
        assert _hashes(path) == before, argv
    assert not [p for p in os.listdir(tmp_path) if p not in ("app.db", "app.db-wal", "app.db-shm")]

    # A migrate from the crashed store copies what the application had committed.
    target = sq.new_store(scenarios=False)
    r = run("migrate", "--from", path, "--to", target, "--all", "-f", "json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["totals"]["verified"] == len(keys)
    assert _hashes(path) == before


# -- locations: not a regular file, hot journal

INSPECT = [["threads", "list"], ["store", "info"], ["transcript", "show", "-t", "acme:_:s-001"],
           ["compat", "report"], ["thread", "erase", "-t", "acme:_:s-001", "--dry-run"]]


@pytest.mark.parametrize("what", ["fifo", "directory", "char-device", "socket", "fifo-wal"])
def test_a_store_path_that_is_no_regular_file_is_exit_4_at_once(what, tmp_path, sqlite_store):
    import os
    import shutil
    import socket
    import time

    if what == "fifo":
        path = tmp_path / "pipe.db"
        os.mkfifo(path)
        expected = "is a FIFO (named pipe), not an SQLite file"
    elif what == "directory":
        path = tmp_path / "dir.db"
        path.mkdir()
        expected = "is a directory"
    elif what == "char-device":
        path = "/dev/null"
        expected = "is a character device"
    elif what == "socket":
        path = tmp_path / "sock.db"
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        expected = "is a socket"
    else:  # a real store whose -wal is a FIFO: SQLite would block opening it
        path = tmp_path / "fifo-wal.db"
        shutil.copyfile(sqlite_store, path)
        os.mkfifo(f"{path}-wal")
        expected = "-wal is a FIFO"
    started = time.monotonic()
    for argv in INSPECT + [["migrate", "--from", str(path), "--to", str(tmp_path / "t.db"), "--all", "--init-target"]]:
        args = argv if argv[0] == "migrate" else [*argv, "--store", str(path)]
        r = run(*args)
        assert r.code == 4, (argv, r.code, r.err)
        assert expected in r.err and r.err.count("\n") == 1 and r.out == "", r.err
    for init in ([], ["--init-target"]):
        r = run("migrate", "--from", str(sqlite_store), "--to", str(path), "--all", *init)
        assert r.code == 4 and expected in r.err, r.err
    assert time.monotonic() - started < 20  # nothing blocked


def _rollback_store_with_hot_journal(path: str) -> None:
    """A real graph writes the store; the application switches it to rollback mode and is killed
    (SIGKILL) in the middle of a large transaction, after SQLite spilled pages into the file."""
    import subprocess
    import sys

    from tests.support.backends import SqliteBackend

    with SqliteBackend.saver(None, path) as saver:
        from tests.support.scenarios import write_scenarios

        write_scenarios(saver)
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    code = (
        "import os, signal, sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "c.execute('PRAGMA cache_size = 2')\n"
        "c.execute('BEGIN')\n"
        "c.execute(\"UPDATE checkpoints SET metadata = CAST(zeroblob(3000) AS BLOB)\")\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    subprocess.run([sys.executable, "-c", code, path], timeout=60)


def test_a_hot_rollback_journal_is_named_as_such(tmp_path):
    import os

    path = str(tmp_path / "rollback.db")
    _rollback_store_with_hot_journal(path)
    with open(path + "-journal", "rb") as fh:
        assert fh.read(8) == bytes.fromhex("d9d505f920a163d7")  # a valid journal header: hot
    before = _hashes(path)
    for argv in INSPECT:
        r = run(*argv, "--store", path)
        assert r.code == 4, (argv, r.err)
        assert "hot rollback journal" in r.err and "read-only:" not in r.err and r.err.count("\n") == 1, r.err
        assert _hashes(path) == before
    assert os.path.exists(path + "-journal")


# -- locations: libpq key/value strings


def _quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _kv(pg, db: str, **extra) -> str:
    params = {"host": pg.host, "port": str(pg.port), "dbname": db, "user": pg.user, "password": pg.password or "", **extra}
    return "  ".join(f"{k} = {_quoted(v)}" if k in ("password", "options") else f"{k}={v}" for k, v in params.items())


def test_a_libpq_key_value_string_is_a_postgres_location(request, tmp_path):
    pg = backend_for("postgres", request)
    url = pg.new_store(scenarios=True)
    kv = _kv(pg, pg.db_of(url))
    secret = pg.password
    assert secret and secret in kv

    results = {}
    for argv in (["threads", "list", "-f", "json"], ["store", "info", "-f", "json"],
                 ["transcript", "show", "-t", "acme:_:s-001", "-f", "json"], ["compat", "report", "-f", "json"]):
        r_kv, r_url = run(*argv, "--store", kv), run(*argv, "--store", url)
        assert r_kv.code == 0, r_kv.err
        assert secret not in r_kv.out + r_kv.err
        results[argv[0]] = r_kv
        if argv[0] != "store":
            assert r_kv.out == r_url.out  # the same store, read the same way
    info = json.loads(results["store"].out)
    assert info["kind"] == "postgres" and info["location"].endswith("password = ***")  # shown masked
    assert info["read-only_session"] == "on"

    # libpq options in the string stay, and the session is still read-only.
    with_options = _kv(pg, pg.db_of(url), options="-c search_path=public")
    r = run("store", "info", "--store", with_options, "-f", "json")
    assert r.code == 0 and json.loads(r.out)["read-only_session"] == "on", r.out
    assert "options = '-c search_path=public'" in json.loads(r.out)["location"]

    # A wrong password: exit 4, never printed, in the error or anywhere.
    bad = _kv(pg, pg.db_of(url)).replace(_quoted(secret), _quoted("hunter2 'x' \\ y"))
    r = run("threads", "list", "--store", bad)
    assert r.code == 4 and "hunter2" not in r.err and "password = ***" in r.err, r.err

    # Copy from and into key/value locations.
    target = pg.new_store(scenarios=False)
    r = run("migrate", "--from", kv, "--to", _kv(pg, pg.db_of(target)), "--all", "-f", "json")
    assert r.code == 0 and secret not in r.out + r.err, r.err
    assert json.loads(r.out)["source"].endswith("password = ***")


@pytest.mark.parametrize("raw", [
    "host=h dbname=x user=u bogus=1 password=hunter2",
    "hots=db.internal password=hunter2",
    "host=h password='hunter2",
    "host=h dbname=x password",
])
def test_a_key_value_string_libpq_would_refuse_is_exit_2_and_never_a_file(raw, tmp_path, monkeypatch):
    import os

    monkeypatch.chdir(tmp_path)
    for argv in (["threads", "list"], ["store", "info"], ["transcript", "show", "-t", "a:_:b"]):
        r = run(*argv, "--store", raw)
        assert r.code == 2, (raw, r.code, r.err)
        assert "hunter2" not in r.err and r.err.count("\n") == 1 and "SQLite" not in r.err, r.err
    assert os.listdir(tmp_path) == []  # nothing created, nothing taken for a file


# -- locations: MongoDB URL options pymongo refuses


def _with_option(url: str, option: str) -> str:
    return url + ("&" if "?" in url else "?") + option


@pytest.mark.parametrize("option,reason", [
    ("readPreference=nope", "Not a valid read preference"),
    ("tls=maybe", "The value of tls must be 'true' or 'false'"),
    ("connectTimeoutMS=-5", "connecttimeoutms must be greater than 0"),
    ("noSuchOption=1", "Unknown option"),
])
def test_invalid_mongodb_url_options_are_exit_2_with_pymongos_reason(option, reason, request):
    import subprocess
    import sys

    mongo = backend_for("mongodb", request)
    url = mongo.new_store(scenarios=True)
    bad = _with_option(url, option)
    for argv in (["threads", "list"], ["store", "info"], ["compat", "report"]):
        r = run(*argv, "--store", bad)
        assert r.code == 2, (argv, r.code, r.err)
        assert reason in r.err and f"'{option}'" in r.err and r.err.count("\n") == 1 and r.out == "", r.err
    # In a fresh process: no Python warning reaches stderr, only the one line.
    proc = subprocess.run([sys.executable, "-m", "symfonic_cli", "threads", "list", "--store", bad],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Warning" not in proc.stderr, proc.stderr
    # Valid options still work.
    good = run("threads", "list", "--store", _with_option(url, "readPreference=primaryPreferred"), "-f", "json")
    assert good.code == 0 and json.loads(good.out), good.err


def test_an_invalid_option_next_to_a_password_option_never_shows_the_secret(request):
    mongo = backend_for("mongodb", request)
    url = _with_option(mongo.new_store(scenarios=False), "tlsCertificateKeyFilePassword=hunter2&tls=maybe")
    r = run("store", "info", "--store", url)
    assert r.code == 2 and "hunter2" not in r.err and "'tls=maybe'" in r.err, r.err


# -- generated numbers: both routes agree, and only 0 or 2 come out


def test_generated_numbers_give_the_same_answer_on_both_routes(sqlite_master):
    from unittest import mock

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from symfonic_cli.cli import fast

    numbers = st.one_of(
        st.integers(min_value=-(10**30), max_value=10**30).map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.sampled_from(["nan", "NaN", "-nan", "inf", "+inf", "-inf", "Infinity", "1e400", "0x10", "1_000", "٣", " 5", "5 ", "", "0" * 30 + "1"]),
    )

    @settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(limit=numbers, timeout=numbers)
    def check(limit, timeout):
        argv = ["threads", "list", "--store", str(sqlite_master), "--limit", limit, "-f", "json"]
        env = {"SYMFONIC_CONNECT_TIMEOUT": timeout}
        quick = run(*argv, env=env)
        with mock.patch.object(fast, "run", lambda args, environment: False):
            typer_route = run(*argv, env=env)
        assert (quick.code, quick.out, quick.err) == (typer_route.code, typer_route.out, typer_route.err)
        assert quick.code in (0, 2), quick.err
        if quick.code == 0:
            assert 0 <= int(limit) <= 1_000_000_000 and 0.1 <= float(timeout) <= 3600
            assert len(json.loads(quick.out)) <= int(limit)
        else:
            assert quick.out == "" and quick.err.count("\n") == 1 and "Traceback" not in quick.err

    check()
