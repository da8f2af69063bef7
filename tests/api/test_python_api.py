"""The Python API (``symfonic_cli.open_store``, ``symfonic_cli.api``) against the CLI's own
``-f json`` output, on the same store written by real graphs, on every store kind."""

from __future__ import annotations

import json
from collections.abc import Mapping
import subprocess
import sys
from datetime import datetime, timezone

import pytest

import symfonic_cli
from symfonic_cli import api
from tests.support.cli import run
from tests.support.scenarios import scenarios

KEYS = [s.key for s in scenarios()]


def _json(*args: str):
    r = run(*args, "-f", "json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def _jsonl(*args: str):
    r = run(*args, "-f", "jsonl")
    assert r.code == 0, r.err
    return [json.loads(line) for line in r.out.splitlines()]


def _without(doc, *names):
    """``doc`` without the fields that differ between two runs (ids, clock times, the store's name);
    a RunResult is read as the mapping it is."""
    if isinstance(doc, Mapping):
        return {k: _without(v, *names) for k, v in doc.items() if k not in names}
    if isinstance(doc, list):
        return [_without(v, *names) for v in doc]
    return doc


@pytest.fixture
def store_url(any_kind):
    return any_kind.new_store()


def test_threads_equal_the_listing(store_url):
    with symfonic_cli.open_store(store_url) as st:
        plain = st.threads()
        assert [t.to_json() for t in plain] == _json("threads", "list", "-s", store_url)
        assert sorted(t.key for t in plain) == sorted(KEYS)
        assert all(isinstance(t.last_activity, datetime) and t.last_activity.tzinfo is not None for t in plain)
        assert [t.to_json() for t in st.threads(tenant="acme", sub_tenant="eu")] == _json(
            "threads", "list", "-s", store_url, "--tenant", "acme", "--sub-tenant", "eu")
        sized = st.threads(status=["done", "interrupted"], with_size=True, sort="checkpoints", limit=5)
        assert [t.to_json() for t in sized] == _json(
            "threads", "list", "-s", store_url, "--status", "done,interrupted", "--with-size", "--sort", "checkpoints", "--limit", "5")
        assert sized and all(t.status == "done" and t.size_bytes > 0 for t in sized)
        assert [t.to_json() for t in st.threads(active_within="1d")] == _json("threads", "list", "-s", store_url, "--active-within", "1d")


def test_every_listed_row_has_its_status(store_url):
    """``store.threads()[0].status`` without ``status=``: read for that row when first used, equal to
    the status listing's; the row's JSON stays the plain listing's record."""
    from symfonic_cli.vocabulary import STATUSES

    with symfonic_cli.open_store(store_url) as st:
        plain = st.threads()
        listed = {t.key: t.status for t in st.threads(status=list(STATUSES))}
        before = [t.to_json() for t in plain]
        assert plain and {t.key: t.status for t in plain} == listed
        assert {t.key: t["status"] for t in plain} == listed
        assert [t.to_json() for t in plain] == before and all("status" not in d for d in before)


def test_transcript_equals_transcript_show(store_url):
    with symfonic_cli.open_store(store_url) as st:
        for key in KEYS:
            rows = st.transcript(key)
            assert [r.to_json() for r in rows] == _json("transcript", "show", "-s", store_url, "-t", key), key
        key = "acme:_:s-001"
        rows = st.transcript(key, tools=True)
        assert [r.to_json(True) for r in rows] == _json("transcript", "show", "-s", store_url, "-t", key, "--tools")
        first = rows[0]
        assert (first.index, first.role, first.message_id) == (0, "system", "sys-1")
        assert isinstance(first.timestamp, datetime) and first.timestamp.utcoffset() is not None
        assert [r.to_json() for r in st.transcript(key, speaker="user", index=-1)] == _json(
            "transcript", "show", "-s", store_url, "-t", key, "--speaker", "user", "--index", "-1")
        since = rows[2].timestamp
        assert [r.to_json() for r in st.transcript(key, since=since, limit=2)] == _json(
            "transcript", "show", "-s", store_url, "-t", key, "--since", since.isoformat(), "--limit", "2")
        assert st.transcript(key, since="2999-01-01") == []


def test_thread_state_history_and_diff_equal_the_commands(store_url):
    with symfonic_cli.open_store(store_url) as st:
        for key in ("acme:_:s-001", "initech:_:s-sub", "acme:_:s-rewrite"):
            state = st.thread_state(key)
            assert state.to_json() == _json("thread", "show", "-s", store_url, "-t", key)
            assert state.status == "done" and state.next == [] and state.interrupts == [] and state.errors == []
            history = st.history(key)
            assert [e.to_json() for e in history] == _json("thread", "history", "-s", store_url, "-t", key)
            assert [e.to_json() for e in st.history(key, limit=2)] == _json("thread", "history", "-s", store_url, "-t", key, "-n", "2")
            d = st.diff(key, -2, -1)
            assert d.to_json() == _json("thread", "diff", "-s", store_url, "-t", key, "-2", "-1")
            ids = [e.checkpoint_id for e in history if e.checkpoint_ns == ""]
            assert st.diff(key, ids[-1], ids[0]).to_json() == _json("thread", "diff", "-s", store_url, "-t", key, ids[-1], ids[0])


def test_compat_report_equals_compat_report(store_url):
    now = datetime.now(timezone.utc)
    with symfonic_cli.open_store(store_url) as st:
        assert st.compat_report(now=now).to_json() == _json("compat", "report", "-s", store_url)
        thread = st.compat_report(thread="acme:_:s-001")
        assert thread.to_json() == _json("compat", "report", "-s", store_url, "-t", "acme:_:s-001")
        every = st.compat_report(by_thread=True)
        assert [r.to_json() for r in every] == _jsonl("compat", "report", "-s", store_url, "--by-thread")
        assert len(every) == len(KEYS)


def test_info_equals_store_info(store_url):
    with symfonic_cli.open_store(store_url) as st:
        assert st.info().to_json() == _json("store", "info", "-s", store_url)


def test_unknown_thread_is_not_found_exit_3(store_url):
    with symfonic_cli.open_store(store_url) as st:
        for call in (st.transcript, st.thread_state, st.history, lambda k: st.diff(k, -2, -1), lambda k: st.compat_report(thread=k)):
            with pytest.raises(symfonic_cli.NotFoundError) as caught:
                call("acme:_:s-00")
            assert caught.value.exit_code == 3 and "acme:_:s-001" in caught.value.line()
        with pytest.raises(symfonic_cli.UsageError) as bad:
            st.transcript("acme:_:s-001", since=datetime(2026, 1, 1))  # naive: not an instant
        assert bad.value.exit_code == 2
        with pytest.raises(symfonic_cli.SymfonicError) as bad:
            st.threads(status="sleeping")
        assert bad.value.exit_code == 2


def test_usage_and_search_equal_the_commands(store_url):
    with symfonic_cli.open_store(store_url) as st:
        usage = st.usage(top=3, keep=2)
        assert usage.to_json() == _json("store", "usage", "-s", store_url, "--top", "3", "--keep", "2")
        assert usage.reclaimable["keep"] == 2 and len(usage.largest_threads) == 3
        for args, kw in ((("order",), {}), (("ORDER", "--case-sensitive"), {"case_sensitive": True}),
                         (("refund", "--tenant", "acme", "--tools"), {"tenant": "acme", "tools": True}),
                         (("no such words anywhere",), {})):
            hits = st.search(args[0], **kw)
            assert [h.to_json() for h in hits] == _json("threads", "search", "-s", store_url, *args)
            assert all(h.timestamp is None or h.timestamp.tzinfo is not None for h in hits)
        assert st.search("order") and st.search("no such words anywhere") == []
        for bad in (lambda: st.usage(top=0), lambda: st.search("")):
            with pytest.raises(symfonic_cli.UsageError) as err:
                bad()
            assert err.value.exit_code == 2


def test_prune_equals_thread_prune(any_kind, tmp_path):
    url, other = any_kind.new_store(), any_kind.new_store()
    key = "acme:_:s-001"
    plan = api.prune(url, thread=key, dry_run=True)
    volatile = ("receipt_id", "time", "store", "store_identity", "started")
    assert _without(plan, *volatile) == _without(_json("thread", "prune", "-s", url, "-t", key, "--dry-run"), *volatile)
    with pytest.raises(symfonic_cli.SymfonicError) as refused:
        api.prune(url, thread=key)  # no yes=True: as the command without a terminal
    assert refused.value.exit_code == 6
    # In the API's words: no terminal, no --yes.
    assert refused.value.line() == ("not confirmed: the Python API asks no one, nothing pruned"
                                    " (pass yes=True to prune without a prompt)")
    receipt = api.prune(url, all_threads=True, yes=True, operator="api-test", receipt=str(tmp_path / "r.jsonl"))
    cli = _json("thread", "prune", "-s", other, "--all", "--yes", "--operator", "api-test")
    assert _without(receipt, *volatile) == _without(cli, *volatile)
    assert receipt["summary"]["pruned"] > 0 and api.prune(url, all_threads=True, yes=True)["summary"]["pruned"] == 0
    with pytest.raises(symfonic_cli.NotFoundError) as missing:
        api.prune(url, thread="nobody:_:x", yes=True)
    assert missing.value.exit_code == 3
    with pytest.raises(symfonic_cli.UsageError):
        api.prune(url, all_threads=True, tenant="acme", yes=True)


def test_erase_equals_thread_erase(any_kind, tmp_path):
    url = any_kind.new_store()
    key = "globex:_:s-100"
    plan = api.erase(url, thread=key, dry_run=True)
    assert plan == _json("thread", "erase", "-s", url, "-t", key, "--dry-run")
    assert plan["summary"]["to_erase"] == 1
    with pytest.raises(symfonic_cli.SymfonicError) as refused:
        api.erase(url, thread=key)  # no yes=True: as the command without a terminal
    assert refused.value.exit_code == 6
    with symfonic_cli.open_store(url) as st:
        assert key in [t.key for t in st.threads()]
    receipt_file = tmp_path / "receipts.jsonl"
    receipt = api.erase(url, thread=key, yes=True, operator="api-test", ticket="T-1", receipt=str(receipt_file))
    other = any_kind.new_store()
    cli = _json("thread", "erase", "-s", other, "-t", key, "--yes", "--operator", "api-test", "--ticket", "T-1")
    volatile = ("receipt_id", "time", "store", "store_identity")  # the two stores and the clock
    assert _without(receipt, *volatile) == _without(cli, *volatile)
    assert receipt["summary"]["erased"] == 1 and receipt["operator"] == "api-test"
    lines = [json.loads(line) for line in receipt_file.read_text().splitlines()]
    assert [line["record"] for line in lines] == ["start", "thread", "end"]
    with symfonic_cli.open_store(url) as st:
        assert key not in [t.key for t in st.threads()]
    with pytest.raises(symfonic_cli.NotFoundError) as missing:
        api.erase(url, thread="nobody:_:x", yes=True)
    assert missing.value.exit_code == 3 and missing.value.result is not None


def test_export_equals_thread_export(any_kind, tmp_path):
    url = any_kind.new_store()
    a = api.export(url, tmp_path / "a", tenant="acme", all_sessions=True, tools=True)
    cli = _json("thread", "export", "-s", url, "--tenant", "acme", "--all-sessions", "--tools", "-o", str(tmp_path / "b"))
    assert {k: v for k, v in a.items() if k != "output"} == {k: v for k, v in cli.items() if k != "output"}
    for name in ("transcript",):
        files_a = sorted(p.name for p in (tmp_path / "a" / name).iterdir())
        assert files_a == sorted(p.name for p in (tmp_path / "b" / name).iterdir()) and files_a
        for f in files_a:
            assert (tmp_path / "a" / name / f).read_bytes() == (tmp_path / "b" / name / f).read_bytes()


def test_migrate_equals_migrate(any_kind, tmp_path):
    src = any_kind.new_store()
    keys = ["acme:_:s-001", "initech:_:s-sub"]
    target = str(tmp_path / "t.db")
    first = api.migrate(src, target, thread=keys[0], init_target=True)
    assert first["totals"]["copied"] == 1 and first["totals"]["verified"] == 1
    planned = api.migrate(src, target, thread=keys, dry_run=True)
    assert planned == _json("migrate", "--from", src, "--to", target, "-t", keys[0], "-t", keys[1], "--dry-run")
    done = api.migrate(src, target, thread=keys)
    again = _json("migrate", "--from", src, "--to", target, "-t", keys[0], "-t", keys[1])
    assert (done["totals"]["copied"], done["totals"]["skipped"], done["totals"]["verified"]) == (1, 1, 2)
    assert again["totals"]["skipped"] == 2 and [t["thread"] for t in again["threads"]] == keys
    with symfonic_cli.open_store(target) as st, symfonic_cli.open_store(src) as s:
        for key in keys:
            assert [r.to_json() for r in st.transcript(key)] == [r.to_json() for r in s.transcript(key)]


def test_open_store_refuses_bad_input_with_exit_codes(tmp_path):
    with pytest.raises(symfonic_cli.StoreError) as missing:
        symfonic_cli.open_store(tmp_path / "absent.db")
    assert missing.value.exit_code == 4
    with pytest.raises(symfonic_cli.UsageError) as unknown:
        symfonic_cli.open_store(str(tmp_path / "absent.db"), colour="red")
    assert unknown.value.exit_code == 2


def test_import_stays_cheap():
    # The API is loaded on first use: importing the package loads no store, no typer, no langgraph.
    code = "import sys, symfonic_cli; print(sorted(m for m in sys.modules if m.startswith(('symfonic_cli.', 'typer', 'langgraph', 'rich'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['symfonic_cli.errors']"
