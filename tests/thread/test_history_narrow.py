"""``thread history`` on the demo store's interrupted and failed threads at 80 and 120 columns,
colour on and off: the writes of a checkpoint never shrink to a sliver beside the whole id (at 80
columns they took a line a name, 11 lines for one checkpoint); where the writes column would
break a name or take more lines, they go under the id on lines of their own (fewer columns).
Ids, names and the pending interrupt stay whole; piped, the text is unchanged."""

from __future__ import annotations

import math
import re

import pytest

from tests.support.cli import run
from tests.support.terminal import on_terminal
from tests.thread.test_history import _history

SGR = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> str:
    store = str(tmp_path_factory.mktemp("demo") / "demo.db")
    assert run("demo", store).code == 0
    return store


def _said(e: dict) -> str:
    """A checkpoint's writes as the screen words them (history.py's cell)."""
    def groups(found: list[dict]) -> str:
        return "; ".join(f"{w['node'] or w['task_id']}: {', '.join(w['channels'])}" for w in found)

    text = groups(e["writes"]) or "-"
    return text + ("; pending " + groups(e["pending_writes"]) if e["pending_writes"] else "")


@pytest.mark.parametrize("cols", [80, 120])
@pytest.mark.parametrize("colour", [True, False])
@pytest.mark.parametrize("key", ["acme:eu:s-003", "globex:apac:s-102"])
def test_the_writes_are_readable_at_80_and_120_columns(demo, key, cols, colour):
    full = _history(demo, key)
    assert any(e["pending_writes"] for e in full)  # an interrupt, an error: what a person looks for
    code, out = on_terminal("thread", "history", "-s", demo, key, "--no-pager", cols=cols, rows=100,
                            env={} if colour else {"NO_COLOR": "1"})
    assert code == 0, out
    assert ("\x1b[" in out) == colour
    lines = [SGR.sub("", line).rstrip() for line in out.splitlines()]
    assert max(len(line) for line in lines) <= cols
    starts = [n for n, line in enumerate(lines) if any(line.startswith(e["checkpoint_id"] + " ") for e in full)]
    assert len(starts) == len(full), out  # each id whole, once, at the start of its block
    blocks = [[line for line in lines[a:b] if line.strip()] for a, b in zip(starts, [*starts[1:], len(lines)])]
    for e, block in zip(full, blocks):
        said = _said(e)
        # Readable: the writes fill their lines (at least 40 cells of text a line), never a sliver.
        assert len(block) <= 1 + math.ceil(len(said) / 40), (cols, block)
        shown = " ".join(" ".join(block).split())
        for w in e["writes"] + e["pending_writes"]:
            for name in [w["node"] or w["task_id"], *w["channels"]]:
                assert re.search(rf"(^|\s){re.escape(name)}[:,;]?(\s|$)", shown), (name, block)
        if e["pending_writes"]:
            assert "; pending " in shown, block


def test_piped_history_is_the_text_records(demo):
    key = "globex:apac:s-102"
    full = _history(demo, key)
    piped = run("thread", "history", "-s", demo, key)
    assert piped.code == 0 and piped.err == ""
    rows = piped.out.splitlines()
    assert rows[0].startswith("checkpoint_id\tparent_checkpoint_id\t") and len(rows) == len(full) + 1
    assert [r.split("\t")[0] for r in rows[1:]] == [e["checkpoint_id"] for e in full]
