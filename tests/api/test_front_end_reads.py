"""The Store methods the reading commands are front ends over (issue 46): each answers what its
command prints (the command renders this very answer), streams where the command streams, and
carries what the command says beside its rows as data."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest

import symfonic_cli
from symfonic_cli.environment import Environment
from symfonic_cli.limits import JSON_SNIPPET
from tests.support.cli import run
from tests.support.scenarios import scenarios

KEYS = [s.key for s in scenarios()]


def _json(*args: str):
    r = run(*args, "-f", "json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_listing_streams_the_commands_records(sqlite_master):
    url = str(sqlite_master)
    with symfonic_cli.open_store(url) as st:
        plain = st.listing()
        first = next(iter(plain))  # read as iterated: a page costs a page
        assert [first, *plain] == _json("threads", "list", "-s", url)
        assert plain.columns == ("key", "tenant", "sub_tenant", "session", "checkpoints", "first_activity", "last_activity")
        assert plain.undatable == 0 and plain.status_unknown is None
        page = list(st.listing(status="done,interrupted", limit=3, with_size=True))
        assert page == _json("threads", "list", "-s", url, "--status", "done,interrupted", "--limit", "3", "--with-size")
        firsts = {r["key"]: r["first_message"] for r in st.listing(first_message=True)}
        shown = {r["key"]: r["first_message"] for r in _json("threads", "list", "-s", url, "--columns", "key,first")}
        assert firsts == shown and set(firsts) == set(KEYS) and any(firsts.values())
        assert st.thread_count() == len(KEYS)



def test_threads_is_the_listing_as_rows(sqlite_master):
    """``Store.threads`` is ``Store.listing``'s stream as a list of rows: the same keywords (declared
    once, on listing), checked under its own name, without the stream's own two."""
    url = str(sqlite_master)
    with symfonic_cli.open_store(url) as st:
        for filters in ({}, {"tenant": "acme"}, {"status": "done,interrupted", "limit": 3, "with_size": True},
                        {"sort": "checkpoints", "reverse": True}):
            assert [t.to_json() for t in st.threads(**filters)] == list(st.listing(**filters)), filters
        for extra in ("first_message", "status_if_told"):
            with pytest.raises(symfonic_cli.UsageError, match=f"threads: got an unexpected keyword argument '{extra}'"):
                st.threads(**{extra: True})
        with pytest.raises(symfonic_cli.UsageError, match="threads: got an unexpected keyword argument 'tenants'"):
            st.threads(tenants="acme")
        with pytest.raises(symfonic_cli.UsageError, match="limit must be a whole number"):
            st.threads(limit=-1)
    params = list(inspect.signature(symfonic_cli.Store.threads).parameters)
    assert params[1:14] == list(inspect.signature(symfonic_cli.Store.listing).parameters)[1:14]

def test_matches_stream_the_search_hits(sqlite_master):
    url = str(sqlite_master)
    with symfonic_cli.open_store(url) as st:
        hits = st.matches("order", limit=2)
        assert [h.to_json(JSON_SNIPPET) for h in hits] == _json("threads", "search", "-s", url, "order", "--limit", "2")
        assert hits.skipped == []
        assert [h.to_json(JSON_SNIPPET) for h in st.matches("order")] == [h.to_json() for h in st.search("order")]


def test_compat_answer_holds_the_report_its_table_and_the_gate(sqlite_master):
    url = str(sqlite_master)
    with symfonic_cli.open_store(url) as st:
        answer = st.compat()
        assert answer.mode == "store" and answer.report.to_json()["checkpoints"] == _json("compat", "report", "-s", url)["checkpoints"]
        pairs = answer.pairs(Environment.library())
        assert pairs[0] == ("envelope key", "symfonic_envelope")
        assert answer.failed(["corrupt", "newer"]) == [f for f in ("corrupt", "newer") if answer.findings[f]]
        by_thread = st.compat(by_thread=True)
        rows = list(by_thread.rows(data=False))
        assert sorted(r["thread"] for r in rows) == sorted(KEYS)
        verdicts = st.compat_checkpoints("acme:_:s-001")
        assert [v.to_json() for v in verdicts] == _json("compat", "show", "-s", url, "-t", "acme:_:s-001")


def test_records_carry_what_the_command_says_beside_them(sqlite_master):
    url = str(sqlite_master)
    with symfonic_cli.open_store(url) as st:
        info = st.info()
        assert [name.replace(" ", "_") for name, _ in info.pairs()] == list(info.to_json())
        assert st.thread_state("acme:_:s-001").warnings == []
        assert st.history("acme:_:s-001").warnings == []
        recalled = st.resume_window("acme:_:s-001", max_entries=0)
        assert list(recalled) == [] and recalled.reason == "--max-entries is 0"


def test_importing_the_api_loads_no_operation():
    # PEP 562: symfonic_cli.api loads a name's module when the name is first used.
    code = ("import sys, symfonic_cli.api as a; before = sorted(m for m in sys.modules if m.startswith('symfonic_cli.api.'));"
            " a.open_store; print(before, 'symfonic_cli.api.changes' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] False"
