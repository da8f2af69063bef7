"""What a rewind leaves visible (issue 48 item 5): ``thread history`` marks the copy and the head of
the branch left behind (and gives the copy none of its parent's writes: no node made it);
``thread show`` says when the thread was rewound and to which checkpoint; ``thread prune
--keep-branches`` keeps the old branch's head, and the prune plan says when it would delete one."""

from __future__ import annotations

import json

import pytest

from tests.conftest import backend_for
from tests.support import backends
from tests.support import run_state_scenarios as rs
from tests.support.cli import run
from tests.support.rewind_scenarios import cfg, write

KEY = "acme:_:react-sy"


def _rewound(request, kind: str = "sqlite") -> tuple[str, dict, list[str]]:
    backend = backend_for(kind, request)
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        write(saver, "plain")
        before = [s.config["configurable"]["checkpoint_id"] for s in rs.react_graph().compile(checkpointer=saver).get_state_history(cfg(KEY))]
    res = run("thread", "rewind", "-s", url, KEY, "--to", "-5", "--idle-for", "0", "--yes", "-f", "json")
    assert res.code == 0, res.err
    return url, json.loads(res.out)["threads"][0], before


def test_history_marks_the_copy_and_the_branch_left(request):
    url, receipt, before = _rewound(request)
    got = json.loads(run("thread", "history", "-s", url, KEY, "-f", "json").out)
    by_id = {e["checkpoint_id"]: e for e in got}
    copy = by_id[receipt["new_checkpoint_id"]]
    assert copy["copy"] is True and copy["source"] == "fork" and copy["writes"] == [] and not copy["branch_end"]
    old_head = by_id[before[0]]
    assert old_head["branch_end"] is True and not old_head["copy"]
    assert [e["checkpoint_id"] for e in got if e["branch_end"]] == [before[0]]
    assert by_id[copy["parent_checkpoint_id"]]["forked"] is True
    text = run("thread", "history", "-s", url, KEY, "-f", "text").out
    assert f"{before[0]}\t" in text and "branch-end" in text and "\tcopy\t" in text


@pytest.mark.parametrize("kind", backends.KINDS)
def test_show_says_the_thread_was_rewound(request, kind):
    url, receipt, _ = _rewound(request, kind)
    doc = json.loads(run("thread", "show", "-s", url, KEY, "-f", "json").out)
    assert doc["source"] == "fork" and doc["rewound"]["copy_of"] == receipt["copy_of"]
    assert doc["rewound"]["at"] is not None
    text = run("thread", "show", "-s", url, KEY, "-f", "text").out
    assert "rewound" in text and receipt["copy_of"] in text


def test_prune_plan_says_it_deletes_the_branch_and_keep_branches_keeps_its_head(request):
    url, receipt, before = _rewound(request)
    plan = json.loads(run("thread", "prune", "-s", url, "-t", KEY, "--dry-run", "-f", "json").out)
    [t] = plan["threads"]
    assert t["branches"]["heads_deleted"] >= 1
    text = run("thread", "prune", "-s", url, "-t", KEY, "--dry-run", "-f", "text").out
    assert "forked:" in text and "branch head(s)" in text and "--keep-branches" in text
    res = run("thread", "prune", "-s", url, "-t", KEY, "--keep-branches", "--yes", "-f", "json")
    assert res.code == 0, res.err
    got = {e["checkpoint_id"] for e in json.loads(run("thread", "history", "-s", url, KEY, "-f", "json").out)}
    assert {before[0], receipt["new_checkpoint_id"]} <= got  # the old branch's head and the copy stay
    assert len(got) < len(before) + 1  # and the prune did delete the rest
