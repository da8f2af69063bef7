"""A SQLite dry run reads each thread's rows once for its plan and its lost-message count
(stores/sqlite/prune.py ``prune_plans(reader=...)``): the plans and counts equal those of the
per-thread reads (the facts, the measure, the heads, then the count's own read of the blobs),
on stores real graphs and a real SymfonicAgent wrote, every rule's shape."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from symfonic_cli.location import resolve_store
from symfonic_cli.prune.lost import messages_only_in_deleted, quick_reader
from symfonic_cli.stores import open_store
from symfonic_cli.stores._prune import RulePrune
from tests.conftest import backend_for
from tests.support import prune_graphs as pg
from tests.support.scenarios import write_scenarios


def _shown(p) -> tuple:
    return (p.key, p.rows, p.bytes, p.checkpoints_before, p.detached, p.delta_ancestors, p.skipped, p.redated,
            p.redated_to, p.last_at, p.branch_heads, p.branch_heads_deleted)


def _both(url: str, **rule) -> tuple[list, list]:
    with open_store(resolve_store(url)) as st:
        keys = st.thread_keys_with_prefix("")
        assert len(keys) >= 3
        one = st.prune_plans(keys, reader=quick_reader(st), **rule)
        assert any(p.read for p in one)  # the one read's views were made, and counted from below
        apart = RulePrune.prune_plans(st, keys, **rule)  # type: ignore[arg-type]
        assert all(p.read is None for p in apart)
        lost_one = [messages_only_in_deleted(st, p.key, decision=p.decision, views=p.read) for p in one]  # type: ignore[arg-type]
        lost_apart = [messages_only_in_deleted(st, p.key, **rule) for p in apart]
    return [(*_shown(p), n) for p, n in zip(one, lost_one)], [(*_shown(p), n) for p, n in zip(apart, lost_apart)]


@pytest.fixture(scope="module")
def graphs_store(request) -> str:
    backend = backend_for("sqlite", request)
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        write_scenarios(saver)
        pg.write_prune_threads(saver)
    return url


@pytest.mark.parametrize("rule", [{"keep": 1}, {"keep": 2}, {"keep": 1, "keep_branches": True},
                                  {"keep": 1, "newer_than": datetime.now(timezone.utc) + timedelta(days=1)}])
def test_one_read_plans_equal_the_reads_apart(graphs_store, rule):
    one, apart = _both(graphs_store, **rule)
    assert one == apart
    assert any(t[1].get("checkpoints") for t in one)  # something is pruned: the measure is compared


def test_one_read_counts_the_messages_compaction_left_only_in_deleted_checkpoints(agent_sqlite):
    one, apart = _both(agent_sqlite, keep=1)
    assert one == apart
    assert any(t[-1] for t in one)  # a thread loses messages for good: the count's exact pass ran
