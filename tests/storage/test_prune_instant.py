"""thread prune dates checkpoints by instant, as listing and erase do (issue 33 item 1), on every
store kind and on the id forms the activity tests use (tests/support/rewritten_ids.py): the UUIDv6
time in any letter case, else the checkpoint's ``ts``, else undatable, which is never old.

Each thread is written by the real graph and saver: two turns 100 days ago (LangGraph's clock
moved back, tests/support/old_threads.py) and two turns now, then its ids rewritten. The keep rules
run one after the other on the same store; after each, what is left is exactly what the rule keeps
of what was there, computed here from the times the real graph wrote.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from tests.support.cli import run
from tests.support.old_threads import write_aged
from tests.support.rewritten_ids import rewrite_ids

DAY = timedelta(days=1)
FORMS = ("plain", "upper", "iso", "undatable")
RULES = (
    ("--older-than", "200d"),  # nothing is that old: nothing goes
    ("--older-than", "30d", "--keep", "3"),
    ("--older-than", "30d"),
    ("--keep", "2"),
)


def _key(form: str) -> str:
    return f"acme:_:{form}"


def _times(backend, url: str, key: str) -> dict[str, datetime]:
    with backend.saver(url) as saver:
        out = {}
        for t in saver.list({"configurable": {"thread_id": key}}):
            assert t.config["configurable"]["checkpoint_ns"] == ""
            out[t.checkpoint["id"]] = datetime.fromisoformat(t.checkpoint["ts"])
        return out


def _ids(backend, url: str, key: str) -> set[str]:
    with backend.saver(url) as saver:
        return {t.config["configurable"]["checkpoint_id"] for t in saver.list({"configurable": {"thread_id": key}})}


def _kept(ids: set[str], when: dict[str, datetime | None], rule: tuple[str, ...], now: datetime) -> set[str]:
    args = dict(zip(rule[::2], rule[1::2]))
    keep = int(args.get("--keep", "1"))
    kept = set(sorted(ids, reverse=True)[:keep])  # the saver's order: the greatest id first
    if "--older-than" in args:
        cut = now - int(args["--older-than"][:-1]) * DAY
        kept |= {i for i in ids if when[i] is None or when[i] > cut}  # type: ignore[operator]
    return kept


@pytest.fixture
def aged(any_kind):
    backend = any_kind
    url = backend.new_store(scenarios=False)
    keys = {_key(f): f for f in FORMS}
    write_aged(backend, url, dict.fromkeys(keys, 100 * DAY))
    write_aged(backend, url, dict.fromkeys(keys, timedelta(0)))
    when: dict[str, dict[str, datetime | None]] = {}
    for key, form in keys.items():
        times = _times(backend, url, key)
        mapping = {i: i for i in times} if form == "plain" else rewrite_ids(backend.kind, url, key, form)
        when[key] = {mapping[i]: (None if form == "undatable" else t) for i, t in times.items()}
        assert set(when[key]) == _ids(backend, url, key)
    return backend, url, when


def test_every_keep_rule_dates_by_instant_on_every_id_form(aged):
    backend, url, when = aged
    # Each thread holds old and recent checkpoints (so every rule has something to decide).
    for key, times in when.items():
        dated = [t for t in times.values() if t is not None]
        if key != _key("undatable"):
            assert min(dated) < datetime.now(timezone.utc) - 90 * DAY < datetime.now(timezone.utc) - DAY < max(dated)
    for rule in RULES:
        before = {k: _ids(backend, url, k) for k in when}
        now = datetime.now(timezone.utc)
        res = run("thread", "prune", "-s", url, "--all", *rule, "--yes", "-f", "json")
        assert res.code == 0, (rule, res.err)
        statuses = {t["key"]: t["status"] for t in json.loads(res.out)["threads"]}
        for key, times in when.items():
            expected = _kept(before[key], times, rule, now)
            assert _ids(backend, url, key) == expected, (rule, key)
            assert statuses[key] == ("pruned" if expected != before[key] else "nothing-to-prune"), (rule, key)
    # The recent checkpoints of every form survived every --older-than 30d; an undatable thread
    # lost only what --keep 2 asked for.
    assert len(_ids(backend, url, _key("undatable"))) == 2


def test_a_recent_iso_thread_keeps_everything_under_older_than(any_kind):
    """The issue's case: ISO 8601 ids, all written seconds ago: ``--older-than 30d`` keeps all."""
    url = any_kind.new_store(scenarios=False)
    key = "acme:_:iso-now"
    write_aged(any_kind, url, {key: timedelta(0)})
    rewrite_ids(any_kind.kind, url, key, "iso")
    before = _ids(any_kind, url, key)
    assert len(before) > 2
    dry = json.loads(run("thread", "prune", "-s", url, "-t", key, "--older-than", "30d", "--dry-run", "-f", "json").out)
    assert [t["status"] for t in dry["threads"]] == ["nothing-to-prune"]
    res = run("thread", "prune", "-s", url, "-t", key, "--older-than", "30d", "--yes", "-f", "json")
    assert res.code == 0, res.err
    assert _ids(any_kind, url, key) == before
