"""``symfonic compat report|show`` on real stores of every kind, written by real graphs.

The envelopes are merged into the metadata by tests.support.envelope_saver.EnvelopeSaver around the real
saver, the way a migrated writer does; legacy threads go through the same saver with none.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest

from symfonic_cli.clock import checkpoint_id_time, iso_utc
from tests.support.cli import run, run_process
from tests.support.envelope_saver import NO_ENVELOPE, EnvelopeSaver, migrated

ANSI_LINE = "\x1b]0;pwned\x07\x1b[31mred"


def _no_version():
    env = migrated()
    del env["format_version"]
    return env


# thread -> envelopes, one graph turn each
THREADS = {
    "acme:_:legacy": [NO_ENVELOPE],
    "acme:_:migrated": [migrated(finalized=True), migrated(finalized=True)],
    "acme:_:mixed": [NO_ENVELOPE, migrated(finalized=True)],
    "acme:_:legacy-envelope": [migrated(writer_line="legacy")],
    "acme:_:boundaries": [
        migrated(safe_boundary=True, boundary_id="b-1", boundary_sequence=1, finalized=True),
        migrated(safe_boundary=True, boundary_id="b-2", boundary_sequence=2, finalized=True),
        migrated(finalized=True),
    ],
    "bad:_:string": ["v1"],
    "bad:_:list": [[1, 2]],
    "bad:_:null": [None],
    "bad:_:no-version": [_no_version()],
    "bad:_:str-version": [migrated(format_version="1")],
    "bad:_:bool-version": [migrated(format_version=True)],
    "bad:_:zero-version": [migrated(format_version=0)],
    "bad:_:float-version": [migrated(format_version=1.5)],
    "bad:_:writer": [migrated(writer_line="beta")],
    "bad:_:ansi": [migrated(writer_line=ANSI_LINE)],
    "future:_:v2": [migrated(format_version=2)],
    "flags:_:strings": [migrated(safe_boundary="false", finalized="false", boundary_sequence="3")],
    "flags:_:null-boundary": [migrated(safe_boundary=None)],
    "crash:_:old": [migrated(finalized=False)],
    "crash:_:new": [migrated(finalized=False)],
}
OLD = {"crash:_:old": timedelta(hours=-1)}  # written as if an hour ago

NOT_MAPPING = "'symfonic_envelope' is not a mapping; the envelope is corrupt"
CORRUPT = {
    "bad:_:string": NOT_MAPPING,
    "bad:_:list": NOT_MAPPING,
    "bad:_:null": NOT_MAPPING,
    "bad:_:no-version": "envelope carries no usable format_version (None)",
    "bad:_:str-version": "envelope carries no usable format_version ('1')",
    "bad:_:bool-version": "envelope carries no usable format_version (True)",
    "bad:_:zero-version": "envelope carries no usable format_version (0)",
    "bad:_:float-version": "envelope carries no usable format_version (1.5)",
    "bad:_:writer": "envelope writer_line 'beta' is not one of 'legacy', 'migrated'",
}


@dataclass
class CompatStore:
    url: str
    checkpoints: dict[str, list[str]] = field(default_factory=dict)  # thread -> ids, newest first
    turn_ends: dict[str, list[str]] = field(default_factory=dict)  # thread -> last id of each turn

    def n(self, *threads: str) -> int:
        return sum(len(self.checkpoints[t]) for t in threads)


def _write(backend, threads, *, key="symfonic_envelope") -> CompatStore:
    from langchain_core.messages import HumanMessage

    from tests.support.scenarios import agent_graph

    store = CompatStore(backend.new_store(scenarios=False))
    with backend.saver(store.url) as inner:
        saver = EnvelopeSaver(inner, key=key)
        graph = agent_graph().compile(checkpointer=saver)
        for thread, envelopes in threads.items():
            cfg = {"configurable": {"thread_id": thread}}
            saver.clock_offset = OLD.get(thread)
            for i, env in enumerate(envelopes):
                saver.envelope = env
                graph.invoke({"messages": [HumanMessage(content=f"turn {i}")]}, cfg)
                store.turn_ends.setdefault(thread, []).append(inner.get_tuple(cfg).config["configurable"]["checkpoint_id"])
            store.checkpoints[thread] = [t.config["configurable"]["checkpoint_id"] for t in inner.list(cfg)]
    return store


@pytest.fixture(scope="module")
def cs(shared_kind) -> CompatStore:
    return _write(shared_kind, THREADS)


def report(cs: CompatStore, *args: str, code: int | None = None, env=None):
    r = run("compat", "report", "--store", cs.url, "--format", "json", *args, env=env)
    if code is not None:
        assert r.code == code, r.err
    return json.loads(r.out) if r.out.strip() else None, r


def thread(cs: CompatStore, key: str, *args: str, code: int | None = 0):
    data, _ = report(cs, "--thread", key, "--fail-on", "", *args, code=code)
    return data


# -- store-wide


def test_store_wide_counts_by_line_and_version(cs):
    data, r = report(cs, code=5)
    lines = {(x["writer_line"], x["format_version"]): x["checkpoints"] for x in data["by_writer_line"]}
    legacy_v0 = cs.n("acme:_:legacy") + len(cs.checkpoints["acme:_:mixed"]) - _turn_count(cs, "acme:_:mixed", 1)
    assert lines == {
        ("legacy", 0): legacy_v0,
        ("legacy", 1): cs.n("acme:_:legacy-envelope"),
        ("migrated", 1): cs.n("acme:_:migrated", "acme:_:boundaries", "flags:_:strings", "flags:_:null-boundary",
                              "crash:_:old", "crash:_:new")
        + _turn_count(cs, "acme:_:mixed", 1),
    }
    assert data["checkpoints"] == sum(len(v) for v in cs.checkpoints.values())
    assert data["threads"] == len(THREADS)
    assert "corrupt: " in r.err or r.err.startswith("symfonic: error: compat report: findings named by --fail-on present")


def _turn_count(cs: CompatStore, key: str, turn: int) -> int:
    """Checkpoints written by turn ``turn`` (0-based) of a thread."""
    ids = sorted(cs.checkpoints[key])
    ends = cs.turn_ends[key]
    lo = ends[turn - 1] if turn else ""
    return sum(1 for i in ids if lo < i <= ends[turn])


def test_store_wide_corrupt_by_reason_and_newer(cs):
    data, _ = report(cs, code=5)
    corrupt = {x["reason"]: x["checkpoints"] for x in data["corrupt"]}
    expected: dict[str, int] = {}
    for key, reason in CORRUPT.items():
        expected[reason] = expected.get(reason, 0) + cs.n(key)
    ansi_reason = [r for r in corrupt if "writer_line" in r and "beta" not in r]
    assert len(ansi_reason) == 1
    assert corrupt.pop(ansi_reason[0]) == cs.n("bad:_:ansi")
    assert corrupt == expected
    assert data["newer"] == [{"format_version": 2, "checkpoints": cs.n("future:_:v2")}]
    assert data["findings"]["corrupt"] == cs.n(*CORRUPT, "bad:_:ansi")
    assert data["findings"]["newer"] == cs.n("future:_:v2")


def test_store_wide_latest_checkpoint_of_threads_and_verdicts(cs):
    data, _ = report(cs, code=5)
    assert data["latest_checkpoint_of_threads"] == {"legacy": 2, "migrated": 7, "corrupt": 10, "newer": 1}
    assert data["verdict"] == {"migrated_can_read_all": False, "legacy_can_read_all": False}
    assert data["unfinalized"] == {"in_flight": cs.n("crash:_:new"), "interrupted": cs.n("crash:_:old")}
    anomalies = {x["anomaly"]: x["checkpoints"] for x in data["anomalies"]}
    assert anomalies == {
        "safe_boundary is 'false' (string), read as True": cs.n("flags:_:strings"),
        "finalized is 'false' (string), read as absent": cs.n("flags:_:strings"),
        "boundary_sequence is a string, not an integer; read as absent": cs.n("flags:_:strings"),
        # null is not a bool: a finding (absent would not be; the real bools elsewhere are not).
        "safe_boundary is None (null), read as False": cs.n("flags:_:null-boundary"),
    }


def test_verdicts_when_only_newer_or_only_readable(any_kind):
    clean = _write(any_kind, {"a:_:1": [NO_ENVELOPE], "a:_:2": [migrated(finalized=True)]})
    data, _ = report(clean, code=0)
    assert data["verdict"] == {"migrated_can_read_all": True, "legacy_can_read_all": True}
    assert data["findings"] == {"corrupt": 0, "newer": 0, "interrupted": 0, "legacy": clean.n("a:_:1")}
    report(clean, "--fail-on", "legacy", code=5)
    newer = _write(any_kind, {"a:_:3": [migrated(format_version=2)]})
    data, _ = report(newer, code=5)
    assert data["verdict"] == {"migrated_can_read_all": False, "legacy_can_read_all": False}
    data, _ = report(newer, "--current-format", "2", code=0)
    assert data["verdict"] == {"migrated_can_read_all": True, "legacy_can_read_all": True}
    assert data["by_writer_line"] == [{"writer_line": "migrated", "format_version": 2, "checkpoints": newer.n("a:_:3")}]


def test_store_wide_agrees_with_every_thread(cs):
    whole, _ = report(cs, "--grace", "30m", code=5)
    r = run("compat", "report", "--store", cs.url, "--by-thread", "--format", "jsonl", "--grace", "30m")
    assert r.code == 5
    rows = [json.loads(line) for line in r.out.splitlines()]
    assert [x["thread"] for x in rows] == sorted(THREADS)
    summed = {f: sum(x["findings"][f] for x in rows) for f in whole["findings"]}
    assert summed == whole["findings"]
    latest = {}
    for x in rows:
        latest[x["latest"]["status"]] = latest.get(x["latest"]["status"], 0) + 1
    assert latest == {k: v for k, v in whole["latest_checkpoint_of_threads"].items() if v}


# -- fail-on and exit codes


def test_fail_on_default_and_named(cs):
    report(cs, code=5)
    report(cs, "--fail-on", "", code=0)
    report(cs, "--fail-on", "interrupted", code=5)
    report(cs, "--thread", "crash:_:new", code=0)
    report(cs, "--thread", "crash:_:new", "--fail-on", "interrupted", code=0)
    report(cs, "--thread", "crash:_:new", "--fail-on", "interrupted", "--grace", "0s", code=5)
    report(cs, "--thread", "acme:_:mixed", code=0)
    report(cs, "--thread", "acme:_:mixed", "--fail-on", "legacy", code=5)
    report(cs, "--thread", "future:_:v2", code=5)
    report(cs, "--thread", "future:_:v2", "--fail-on", "corrupt", code=0)


def test_exit_5_is_one_line_without_traceback(cs):
    r = run_process("compat", "report", "--store", cs.url, "--format", "json")
    assert r.code == 5
    # The one line names each finding's checkpoints, threads (the first, escaped) and releases.
    data = json.loads(r.out)["finding_threads"]
    corrupt, newer = data["corrupt"], data["newer"]
    assert corrupt["first_threads"][0] < "future"  # the first in byte order: a bad:_: key
    releases = lambda found: ", ".join(v["package_version"] or "(none)" for v in found["package_versions"])  # noqa: E731
    assert r.err == "symfonic: error: compat report: findings named by --fail-on present " \
        f"(corrupt: {cs.n(*CORRUPT, 'bad:_:ansi')} checkpoint(s) in {corrupt['threads']} thread(s), " \
        f"first '{corrupt['first_threads'][0]}', written by {releases(corrupt)}; " \
        f"newer: {cs.n('future:_:v2')} checkpoint(s) in 1 thread(s), first 'future:_:v2', written by {releases(newer)})\n"
    one = run("compat", "report", "--store", cs.url, "--thread", "future:_:v2")
    assert one.code == 5 and one.err == f"symfonic: error: compat report: findings named by --fail-on present " \
        f"(newer: {cs.n('future:_:v2')} checkpoint(s) in thread 'future:_:v2')\n"
    assert json.loads(r.out)["checkpoints"] == sum(len(v) for v in cs.checkpoints.values())


@pytest.mark.parametrize(
    "args, needle",
    [
        (("--fail-on", "corrupt,bogus"), "unknown --fail-on finding 'bogus'"),
        (("--grace", "soon"), "--grace 'soon' is not a duration"),
        (("--by-thread", "--thread", "a:_:b"), "--by-thread reports every thread"),
        (("--format", "yaml"), "unknown --format 'yaml'"),
        (("--envelope-key", ""), "--envelope-key is empty"),
        (("--current-format", "0"), "--current-format"),
    ],
)
def test_usage_errors_exit_2(cs, args, needle):
    r = run("compat", "report", "--store", cs.url, *args)
    assert r.code == 2 and needle in r.err and "Traceback" not in r.err


def test_unknown_thread_exits_3(cs):
    r = run("compat", "report", "--store", cs.url, "--thread", "acme:_:nope")
    assert r.code == 3 and "acme:_:legacy" in r.err
    r = run("compat", "show", "--store", cs.url, "--thread", "acme:_:legacy", "--checkpoint", "nope")
    assert r.code == 3 and "no checkpoint 'nope'" in r.err


# -- per thread: each rule


def test_legacy_thread(cs):
    data = thread(cs, "acme:_:legacy")
    latest = data["latest"]
    assert latest["checkpoint_id"] == cs.checkpoints["acme:_:legacy"][0]
    assert (latest["status"], latest["writer_line"], latest["format_version"]) == ("legacy", "legacy", 0)
    assert latest["reason"] == "no envelope; migrated readers treat absent provenance as legacy"
    assert latest["readable_by_legacy"] and latest["readable_by_migrated"]
    assert data["safe_boundary"] is None and data["unfinalized"] == []


def test_migrated_and_mixed_threads(cs):
    data = thread(cs, "acme:_:migrated")
    assert data["by_status"] == {"legacy": 0, "migrated": cs.n("acme:_:migrated"), "corrupt": 0, "newer": 0}
    assert data["latest"]["reason"] == "envelope is additive under 'symfonic_envelope'; every legacy field is unchanged"
    mixed = thread(cs, "acme:_:mixed")
    assert mixed["by_status"]["legacy"] == _turn_count(cs, "acme:_:mixed", 0)
    assert mixed["by_status"]["migrated"] == _turn_count(cs, "acme:_:mixed", 1)
    assert mixed["latest"]["status"] == "migrated"
    assert mixed["findings"]["legacy"] == _turn_count(cs, "acme:_:mixed", 0)
    env_legacy = thread(cs, "acme:_:legacy-envelope")["latest"]
    assert (env_legacy["status"], env_legacy["format_version"]) == ("legacy", 1)


@pytest.mark.parametrize("key", sorted(CORRUPT))
def test_each_corrupt_form(cs, key):
    data = thread(cs, key)
    assert data["latest"]["status"] == "corrupt"
    assert data["latest"]["reason"] == CORRUPT[key]
    assert data["latest"]["readable_by_migrated"] is False
    assert data["findings"]["corrupt"] == cs.n(key)
    assert {c["reason"] for c in data["corrupt"]} == {CORRUPT[key]}


def test_future_format(cs):
    data = thread(cs, "future:_:v2")
    assert data["latest"]["status"] == "newer" and data["latest"]["format_version"] == 2
    assert data["latest"]["reason"] == "envelope format_version 2 is newer than this package understands (1); refusing to resume"
    ok = thread(cs, "future:_:v2", "--current-format", "2")
    assert ok["latest"]["status"] == "migrated" and ok["findings"]["newer"] == 0


def test_string_typed_booleans(cs):
    data = thread(cs, "flags:_:strings")
    latest = data["latest"]
    # "false" reads as True in symfonic: a boundary, reported as an anomaly; finalized read as absent.
    assert latest["safe_boundary"] is True and latest["finalized"] is None
    assert data["safe_boundary"]["checkpoint_id"] == cs.checkpoints["flags:_:strings"][0]
    assert data["safe_boundary"]["boundary_sequence"] is None
    assert data["unfinalized"] == []
    assert "safe_boundary is 'false' (string), read as True" in latest["anomalies"]


def test_unfinalized_old_and_new(cs):
    old = thread(cs, "crash:_:old")
    assert [u["state"] for u in old["unfinalized"]] == ["interrupted by a crash"] * cs.n("crash:_:old")
    assert [u["checkpoint_id"] for u in old["unfinalized"]] == cs.checkpoints["crash:_:old"]
    new = thread(cs, "crash:_:new")
    assert [u["state"] for u in new["unfinalized"]] == ["in flight"] * cs.n("crash:_:new")
    assert new["findings"]["interrupted"] == 0
    late = thread(cs, "crash:_:new", "--grace", "0s")
    assert {u["state"] for u in late["unfinalized"]} == {"interrupted by a crash"}
    wide = thread(cs, "crash:_:old", "--grace", "2h")
    assert {u["state"] for u in wide["unfinalized"]} == {"in flight"}


def test_latest_of_several_safe_boundaries(cs):
    data = thread(cs, "acme:_:boundaries")
    b = data["safe_boundary"]
    end_of_second_turn = cs.turn_ends["acme:_:boundaries"][1]
    assert (b["boundary_id"], b["boundary_sequence"], b["checkpoint_id"]) == ("b-2", 2, end_of_second_turn)
    assert b["ts"] == iso_utc(checkpoint_id_time(end_of_second_turn))
    assert data["safe_boundaries"] == _turn_count(cs, "acme:_:boundaries", 0) + _turn_count(cs, "acme:_:boundaries", 1)


def test_tenant_session_selects_the_thread(cs):
    data, _ = report(cs, "--tenant", "acme", "--session", "boundaries", "--fail-on", "", code=0)
    assert data["thread"] == "acme:_:boundaries"


# -- show


def test_show_lists_every_checkpoint_newest_first(cs):
    r = run("compat", "show", "--store", cs.url, "--thread", "acme:_:mixed", "--format", "jsonl")
    assert r.code == 0, r.err
    rows = [json.loads(line) for line in r.out.splitlines()]
    assert [x["checkpoint_id"] for x in rows] == cs.checkpoints["acme:_:mixed"]
    assert rows[0]["status"] == "migrated" and rows[-1]["status"] == "legacy"
    assert rows[-1]["source"] == "input" and rows[-1]["step"] == -1
    assert all(x["ts"] == iso_utc(checkpoint_id_time(x["checkpoint_id"])) for x in rows)


def test_show_one_checkpoint_in_full(cs):
    cid = cs.checkpoints["flags:_:strings"][0]
    r = run("compat", "show", "--store", cs.url, "--thread", "flags:_:strings", "--checkpoint", cid, "--format", "json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["checkpoint_id"] == cid and data["direction"] == "migrated->legacy"
    assert data["raw_envelope"]["safe_boundary"] == "false"
    assert data["envelope"]["safe_boundary"] is True and data["envelope"]["boundary_sequence"] is None


def test_untrusted_values_are_escaped_in_tables(cs):
    for args in (("report", "--fail-on", ""), ("show", "--thread", "bad:_:ansi"), ("report", "--by-thread", "--fail-on", "")):
        r = run("compat", *args, "--store", cs.url, "--format", "table")
        assert r.code == 0, r.err
        assert "\x1b" not in r.out and "\x07" not in r.out
    r = run("compat", "show", "--store", cs.url, "--thread", "bad:_:ansi", "--format", "table")
    assert "x1b" in r.out


# -- the envelope key


def test_other_envelope_key_is_suggested_and_readable(any_kind):
    other = _write(any_kind, {"p:_:1": [migrated(finalized=True)]}, key="provenance")
    data, _ = report(other, code=0)
    assert data["by_writer_line"] == [{"writer_line": "legacy", "format_version": 0, "checkpoints": other.n("p:_:1")}]
    assert data["suggestion"] == {"envelope_key": "provenance", "checkpoints": other.n("p:_:1"), "flag": "--envelope-key provenance"}
    table = run("compat", "report", "--store", other.url, "--format", "table")
    assert "--envelope-key provenance" in table.err and "provenance" in table.out
    data, _ = report(other, "--envelope-key", "provenance", code=0)
    assert data["by_writer_line"] == [{"writer_line": "migrated", "format_version": 1, "checkpoints": other.n("p:_:1")}]
    assert data["suggestion"] is None
    data, _ = report(other, code=0, env={"SYMFONIC_ENVELOPE_KEY": "provenance"})
    assert data["envelope_key"] == "provenance" and data["by_writer_line"][0]["writer_line"] == "migrated"


# -- never writes


def test_report_and_show_never_write():
    from tests.support.backends import get

    backend = get("sqlite")
    store = _write(backend, {"w:_:1": [migrated(finalized=False)], "w:_:2": ["corrupt"]})
    path = Path(store.url)

    def digest() -> dict[str, str]:
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in path.parent.glob(path.name + "*")}

    before = digest()
    quiet = ("--fail-on", "")
    for args in (("report", *quiet), ("report", "--by-thread", *quiet), ("report", "--thread", "w:_:1", *quiet), ("show", "--thread", "w:_:2")):
        r = run("compat", *args, "--store", str(path), "--format", "json")
        assert r.code == 0, r.err
    assert digest() == before


@pytest.mark.parametrize("form, interrupted", [("upper", False), ("mixed", False), ("iso", False), ("undatable", True)])
def test_the_grace_window_reads_each_id_by_its_time(any_kind, form, interrupted):
    """Unfinalized checkpoints written just now are "in flight" inside the grace window: time is an
    instant (clock.py), the UUIDv6's time in any letter case, else the checkpoint's ``ts`` (an
    ISO-named checkpoint of very old LangGraph carries one). An id that carries neither (another
    writer's ``step-0001`` without a ``ts``) cannot be in flight. Compared as strings, ``2026-...``
    sorted after every UUIDv6 bound: the ISO-named checkpoints written now read as crashed."""
    from tests.support.rewritten_ids import rewrite_ids

    store = _write(any_kind, {"crash:_:ids": [migrated(finalized=False)]})
    rewrite_ids(any_kind.kind, store.url, "crash:_:ids", form)
    n = len(store.checkpoints["crash:_:ids"])
    data, _ = report(store, "--grace", "1d", "--fail-on", "")
    expected = {"in_flight": 0, "interrupted": n} if interrupted else {"in_flight": n, "interrupted": 0}
    assert data["unfinalized"] == expected
    # The thread's own report and the per-thread reports date them alike, and show when each was written.
    one = thread(store, "crash:_:ids", "--grace", "1d")
    state = "interrupted by a crash" if interrupted else "in flight"
    assert [u["state"] for u in one["unfinalized"]] == [state] * n
    assert all((u["ts"] is None) is (form == "undatable") for u in one["unfinalized"])
    r = run("compat", "report", "--store", store.url, "--by-thread", "--grace", "1d", "--fail-on", "", "--format", "jsonl")
    (row,) = [json.loads(line) for line in r.out.splitlines()]
    assert row["findings"]["interrupted"] == (n if interrupted else 0)
    shown = run("compat", "show", "--store", store.url, "--thread", "crash:_:ids", "--format", "json")
    assert all((c["ts"] is None) is (form == "undatable") for c in json.loads(shown.out))


@pytest.mark.parametrize("stored", [7, 1.5, "not json", b"{\"a\": 1, \"a\": 2}", None])
def test_sqlite_metadata_of_any_storage_class_reads_as_the_saver_reads_it(stored):
    """Rows whose metadata is a number, not JSON, or NULL (another writer's; SQLite stores any
    value in any column): the store-wide report, grouped in the database, counts each as the
    per-thread report, which decodes every row as the saver does, so both name the same findings."""
    import sqlite3

    from tests.support.backends import get

    store = _write(get("sqlite"), {"odd:_:meta": [migrated(finalized=True), migrated(finalized=True)]})
    with sqlite3.connect(store.url) as conn:
        conn.execute("UPDATE checkpoints SET metadata = ? WHERE checkpoint_id = ?", (stored, store.checkpoints["odd:_:meta"][0]))
    whole, _ = report(store, "--fail-on", "", code=0)
    r = run("compat", "report", "--store", store.url, "--by-thread", "--fail-on", "", "--format", "jsonl")
    (row,) = [json.loads(line) for line in r.out.splitlines()]
    assert whole["checkpoints"] == row["checkpoints"] == store.n("odd:_:meta")
    assert whole["findings"] == row["findings"]
    assert sum(row["by_status"].values()) == row["checkpoints"]
    by_status = {s: 0 for s in ("legacy", "migrated", "corrupt", "newer")}
    for line in whole["by_writer_line"]:
        by_status[line["writer_line"]] += line["checkpoints"]
    by_status["corrupt"] = sum(c["checkpoints"] for c in whole["corrupt"])
    assert by_status == row["by_status"]


def test_sqlite_latest_checkpoints_alike_with_and_without_the_primary_key(tmp_path):
    """The store-wide report finds each thread's latest root checkpoint by a seek a group where the
    primary key makes it one row, by a seek a row where no unique index says so (a file another
    writer made): both give the same report."""
    import shutil
    import sqlite3

    from tests.support.backends import get

    store = _write(get("sqlite"), THREADS)
    keyed, _ = report(store, "--fail-on", "", code=0)
    plain = tmp_path / "no-primary-key.db"
    shutil.copy(store.url.removeprefix("sqlite:///"), plain)
    with sqlite3.connect(plain) as conn:
        conn.executescript("CREATE TABLE c AS SELECT * FROM checkpoints; DROP TABLE checkpoints; ALTER TABLE c RENAME TO checkpoints;")
        assert conn.execute("PRAGMA index_list(checkpoints)").fetchall() == []
    unkeyed, _ = report(CompatStore(str(plain)), "--fail-on", "", code=0)
    assert sum(keyed["latest_checkpoint_of_threads"].values()) == len(THREADS)
    assert {k: v for k, v in unkeyed.items() if k != "store"} == {k: v for k, v in keyed.items() if k != "store"}
