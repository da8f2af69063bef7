"""``compat report`` names releases and threads: checkpoints and threads per ``package_version``
(the release that wrote them) and, per finding, its first thread keys, on every store kind.

Real graphs write through the real savers (tests.support.envelope_saver); the expected figures
are computed independently, from the rows the real saver lists back.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from datetime import timedelta

import pytest

from tests.support.cli import run
from tests.support.envelope_saver import NO_ENVELOPE, EnvelopeSaver, migrated

KEY = "symfonic_envelope"
ANSI = "\x1b]0;pwned\x07\x1b[31m"
HOSTILE_RELEASE = f"10.2.0{ANSI}\u202e"
# More than ten threads hold the newer finding; their byte order differs from insertion order,
# from case-folded order and from the order of their UTF-8 text read as Latin-1.
NEWER_KEYS = [
    "new:_:z", "new:_:B", "new:_:a", "new:_:A", "new:_:\u00e4", "new:_:0", "new:_:a b", "new:_:\U0001f600",
    "new:_:\u00e9", "new:_:_", "new:_:~", f"new:_:{ANSI}red", "new:_:Z9",
]
RELEASE_OF_NEWER = {k: ("10.1.0-rc1" if i % 4 == 1 else HOSTILE_RELEASE if i == 2 else "10.0.0") for i, k in enumerate(NEWER_KEYS)}
THREADS = {
    **{k: [migrated(format_version=2, package_version=RELEASE_OF_NEWER[k])] for k in NEWER_KEYS},
    "old:_:1": [NO_ENVELOPE],
    "old:_:2": [NO_ENVELOPE, NO_ENVELOPE],
    "mix:_:1": [NO_ENVELOPE, migrated(finalized=True, package_version="9.12.0"), migrated(finalized=True, package_version="9.13.0")],
    "odd:_:int": [migrated(finalized=True, package_version=913)],  # not a string: no release
    "odd:_:empty": [migrated(finalized=True, package_version="")],  # the empty string is one
    "bad:_:beta": [migrated(writer_line="beta", package_version="9.13.0")],
    "crash:_:old": [migrated(finalized=False, package_version="9.13.0")],
}
OLD = {"crash:_:old": timedelta(hours=-2)}


def _write(backend, threads) -> str:
    from langchain_core.messages import HumanMessage

    from tests.support.scenarios import agent_graph

    url = backend.new_store(scenarios=False)
    with backend.saver(url) as inner:
        saver = EnvelopeSaver(inner)
        graph = agent_graph().compile(checkpointer=saver)
        for thread, envelopes in threads.items():
            saver.clock_offset = OLD.get(thread)
            for i, env in enumerate(envelopes):
                saver.envelope = env
                graph.invoke({"messages": [HumanMessage(content=f"turn {i}")]}, {"configurable": {"thread_id": thread}})
    return url


@pytest.fixture(scope="module")
def store(shared_kind):
    return shared_kind, _write(shared_kind, THREADS)


def _rows(backend, url) -> list[tuple[str, object]]:
    """(thread, envelope) of every checkpoint, as the real saver lists them back."""
    with backend.saver(url) as saver:
        return [(t.config["configurable"]["thread_id"], t.metadata.get(KEY, NO_ENVELOPE)) for t in saver.list(None)]


def _release(env) -> str | None:
    pv = env.get("package_version") if isinstance(env, dict) else None
    return pv if isinstance(pv, str) else None


def _is_newer(env) -> bool:
    v = env.get("format_version") if isinstance(env, dict) else None
    return isinstance(v, int) and not isinstance(v, bool) and v > 1


def _in_byte_order(keys) -> list[str]:
    return sorted(set(keys), key=lambda k: k.encode("utf-8"))


def _report(url, *args, code=5, fmt="json"):
    r = run("compat", "report", "--store", url, "--format", fmt, *args)
    assert r.code == code, r.err
    return json.loads(r.out) if fmt in ("json",) else r.out


def test_checkpoints_and_threads_per_release(store):
    backend, url = store
    rows = _rows(backend, url)
    checkpoints, threads = Counter(), defaultdict(set)
    for thread, env in rows:
        checkpoints[_release(env)] += 1
        threads[_release(env)].add(thread)
    data = _report(url)
    got = {p["package_version"]: (p["checkpoints"], p["threads"]) for p in data["package_versions"]}
    assert got == {r: (n, len(threads[r])) for r, n in checkpoints.items()}
    assert {"10.0.0", "10.1.0-rc1", HOSTILE_RELEASE, "9.12.0", "9.13.0", "", None} == set(got)
    # Strings in order, the checkpoints without a release last.
    order = [p["package_version"] for p in data["package_versions"]]
    assert order == sorted(r for r in got if r is not None) + [None]
    assert sum(n for n, _ in got.values()) == data["checkpoints"] == len(rows)
    # mix:_:1 is counted under each of its three (9.12.0, 9.13.0, none); bad:_:beta, crash:_:old under 9.13.0.
    assert (got["9.12.0"][1], got["9.13.0"][1], got[None][1]) == (1, 3, 4)


def test_first_ten_threads_of_a_finding_in_byte_order(store):
    backend, url = store
    rows = _rows(backend, url)
    newer_threads = _in_byte_order(t for t, env in rows if _is_newer(env))
    assert len(newer_threads) == len(NEWER_KEYS) > 10
    data = _report(url)
    newer = data["finding_threads"]["newer"]
    assert newer["threads"] == len(NEWER_KEYS)
    assert newer["first_threads"] == newer_threads[:10]
    assert newer["first_threads"][0] == f"new:_:{ANSI}red"  # exact, control characters and all
    by_release = Counter(_release(env) for _, env in rows if _is_newer(env))
    assert {p["package_version"]: p["checkpoints"] for p in newer["package_versions"]} == dict(by_release)
    (row,) = newer["by_format_version"]
    assert (row["format_version"], row["checkpoints"], row["threads"]) == (2, sum(by_release.values()), len(NEWER_KEYS))
    assert row["first_threads"] == newer_threads[:10] and row["package_versions"] == newer["package_versions"]
    # The existing fields are unchanged.
    assert data["newer"] == [{"format_version": 2, "checkpoints": sum(by_release.values())}]


def test_other_findings_name_their_threads_and_releases(store):
    backend, url = store
    rows = _rows(backend, url)
    data = _report(url)
    found = data["finding_threads"]
    assert (found["corrupt"]["threads"], found["corrupt"]["first_threads"]) == (1, ["bad:_:beta"])
    assert [p["package_version"] for p in found["corrupt"]["package_versions"]] == ["9.13.0"]
    (reason,) = found["corrupt"]["by_reason"]
    assert reason["reason"] == data["corrupt"][0]["reason"] and reason["first_threads"] == ["bad:_:beta"]
    assert found["interrupted"]["first_threads"] == ["crash:_:old"]
    assert found["interrupted"]["package_versions"] == [
        {"package_version": "9.13.0", "checkpoints": data["unfinalized"]["interrupted"]}]
    legacy = _in_byte_order(t for t, env in rows if env is NO_ENVELOPE)
    assert legacy == ["mix:_:1", "old:_:1", "old:_:2"]
    assert (found["legacy"]["threads"], found["legacy"]["first_threads"]) == (3, legacy)
    assert found["legacy"]["package_versions"] == [{"package_version": None, "checkpoints": data["findings"]["legacy"]}]


def test_by_thread_names_every_thread_of_a_finding(store):
    backend, url = store
    rows = _rows(backend, url)
    out = run("compat", "report", "--store", url, "--by-thread", "--format", "jsonl")
    assert out.code == 5, out.err
    records = [json.loads(line) for line in out.out.splitlines()]
    assert [r["thread"] for r in records] == _in_byte_order(THREADS)
    assert {r["thread"] for r in records if r["findings"]["newer"]} == set(NEWER_KEYS)  # all 13, not 10
    per_thread: dict[str, Counter] = defaultdict(Counter)
    for thread, env in rows:
        per_thread[thread][_release(env)] += 1
    for r in records:
        assert {p["package_version"]: p["checkpoints"] for p in r["package_versions"]} == dict(per_thread[r["thread"]])
    one = _report(url, "--thread", "mix:_:1", "--fail-on", "", code=0)
    assert [p["package_version"] for p in one["package_versions"]] == ["9.12.0", "9.13.0", None]


def test_text_and_table_name_releases_and_threads_escaped(store):
    _, url = store
    data = _report(url)
    text = _report(url, fmt="text")
    lines = dict(line.split("  ", 1) for line in text.splitlines())
    lines = {k.strip(): v.strip() for k, v in lines.items()}
    releases = lines["newer: format_version 2: releases"]
    for p in data["finding_threads"]["newer"]["package_versions"]:
        assert f"({p['checkpoints']})" in releases
    assert "10.0.0 (" in releases and "10.1.0-rc1 (" in releases
    assert "10.2.0\\x1b]0;pwned\\x07\\x1b[31m\\u202e (" in releases
    threads = lines["newer: format_version 2: threads"]
    # The first ten in byte order, escaped; ä, é and the emoji come after them.
    assert threads == ("13 threads: new:_:\\x1b]0;pwned\\x07\\x1b[31mred, new:_:0, new:_:A, new:_:B, new:_:Z9, "
                       "new:_:_, new:_:a, new:_:a b, new:_:z, new:_:~, ... (the first 10; --by-thread lists every one)")
    assert lines["release (none)"] == f"{data['package_versions'][-1]['checkpoints']} checkpoints in 4 threads"
    assert "release 10.2.0\\x1b]0;pwned\\x07\\x1b[31m\\u202e" in lines
    assert lines["interrupted: threads"] == "1 thread: crash:_:old"
    assert lines["legacy: threads"] == "3 threads: mix:_:1, old:_:1, old:_:2"
    for fmt, args in (("text", ()), ("table", ()), ("table", ("--by-thread",)), ("text", ("--thread", NEWER_KEYS[2]))):
        out = run("compat", "report", "--store", url, "--format", fmt, "--fail-on", "", *args)
        assert out.code == 0, out.err
        assert not set(out.out) & {"\x1b", "\x07", "\u202e"}
        assert "pwned" in out.out


def test_postgres_case_insensitive_thread_collation_keeps_twins_apart(request):
    """A nondeterministic (case-insensitive) thread_id collation must not merge case twins."""
    import psycopg

    from tests.conftest import backend_for

    backend = backend_for("postgres", request)
    twins = {"acme:_:bob": [migrated(format_version=2, package_version="10.0.0")],
             "ACME:_:BOB": [migrated(format_version=2, package_version="10.0.0")],
             "acme:_:Bob": [migrated(finalized=True, package_version="9.12.0")]}
    url = _write(backend, twins)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)")
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            conn.execute(f"ALTER TABLE {table} ALTER COLUMN thread_id TYPE text COLLATE ci")
    data = _report(url)
    newer = data["finding_threads"]["newer"]
    assert (newer["threads"], newer["first_threads"]) == (2, ["ACME:_:BOB", "acme:_:bob"])
    assert {p["package_version"]: p["threads"] for p in data["package_versions"]} == {"10.0.0": 2, "9.12.0": 1}
