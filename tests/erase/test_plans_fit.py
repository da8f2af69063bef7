"""The plans and end lines of store-changing runs fit a terminal (issue 25 item 2, issue 23), read
off real pseudo-terminals of 80 and 120 columns running the real binary: a retention sweep's plan
(dry run and the one confirmed), a requested erase's plan (table and text), thread prune's plan
with the per-thread count of messages whose transcript time moves, export's line, and the
summary and receipt lines. Keys, ids, times and numbers stay whole on one line; free text wraps;
only a key wider than the terminal is broken (between characters, all of it shown). A sweep
counts the threads whose activity cannot be dated apart, and never erases them."""

from __future__ import annotations

import json
import re
import shutil
from datetime import timedelta

import pytest

from tests.support.cli import run
from tests.support.old_threads import write_aged
from tests.support.rewritten_ids import rewrite_ids
from tests.support.terminal import on_terminal
from tests.threads.test_listing_fit import ANSI

COLS = [80, 120]


@pytest.fixture
def demo(demo_master, tmp_path):
    path = tmp_path / "d.db"
    shutil.copy(demo_master, path)
    return path


def _screen(*args, cols):
    """test_listing_fit's screen: the real binary on a terminal, no colour, no pager."""
    code, screen = on_terminal(*args, cols=cols, rows=200, env={"NO_COLOR": "1", "SYMFONIC_PAGER": "cat", "PAGER": "cat"})
    return code, ANSI.sub("", screen)


def _lines(screen: str) -> list[str]:
    # A progress line is redrawn with carriage returns: each drawing is a line of its own.
    return [part for line in screen.splitlines() for part in line.split("\r")]


def _fits(screen: str, cols: int) -> list[str]:
    lines = _lines(screen)
    wide = [line for line in lines if len(line.rstrip()) > cols]
    assert not wide, wide
    return lines


def _whole(lines: list[str], *tokens: str) -> None:
    for token in tokens:
        assert any(token in line for line in lines), (token, lines)


def _z(stamp: str) -> str:
    return stamp.replace("+00:00", "Z")


@pytest.mark.parametrize("cols", COLS)
def test_sweep_dry_run_fits(demo, cols):
    s = str(demo)
    plan = json.loads(run("thread", "erase", "-s", s, "--inactive-for", "90d", "--dry-run", "-f", "json").out)
    assert {t["key"] for t in plan["threads"]} == {"acme:_:s-400", "globex:apac:s-101"}
    assert plan["summary"]["undatable"] == 0
    code, screen = _screen("thread", "erase", "-s", s, "--inactive-for", "90d", "--dry-run", cols=cols)
    assert code == 0, screen
    lines = _fits(screen, cols)
    for t in plan["threads"]:
        assert any(line.startswith(f"  {t['key']}: ") for line in lines), t["key"]
        _whole(lines, _z(t["first_activity"]), _z(t["last_activity"]))
    # The cut-off (taken again by this run, so the same day), whole on one line.
    day = plan["selection"]["cut_off"][:10]
    assert any(re.search(re.escape(day) + r"T\d\d:\d\d:\d\d\.\d{6}Z\),", line) for line in lines), lines
    if len(s) + 1 < cols:
        _whole(lines, s + ":")
    assert "undatable" not in screen  # none here: no line for them
    # The text wraps between words: every word of the closing note is there, whole.
    note = " ".join(" ".join(_lines(screen)).split())
    assert "need the tenant privacy erasure; backups and replicas keep copies until they rotate." in note


@pytest.mark.parametrize("cols", COLS)
def test_the_confirmed_sweep_plan_and_its_receipt_lines_fit(demo, tmp_path, cols):
    s = str(demo)
    receipts = tmp_path / "r.jsonl"
    code, screen = _screen("thread", "erase", "-s", s, "--inactive-for", "90d", "--yes", "--receipt", str(receipts), cols=cols)
    assert code == 0, screen
    lines = _fits(screen, cols)
    records = [json.loads(line) for line in receipts.read_text().splitlines()]
    erased = [r["key"] for r in records if r["record"] == "thread"]
    assert sorted(erased) == ["acme:_:s-400", "globex:apac:s-101"]
    for key in erased:
        assert any(line.startswith(f"erased {key} (") for line in lines), key
    assert any(line.startswith("erased 2 thread(s),") for line in lines)
    rid = records[0]["receipt_id"]
    _whole(lines, f"receipt {rid}:")
    if len(str(receipts)) <= cols:
        _whole(lines, str(receipts))
    assert records[-1]["summary"]["undatable"] == 0 and records[0]["threads_undatable"] == 0


@pytest.mark.parametrize("cols", COLS)
def test_a_requested_erase_plan_fits_as_table_and_text(demo, cols):
    s = str(demo)
    plan = json.loads(run("thread", "erase", "-s", s, "--tenant", "acme", "--all-sessions", "--dry-run", "-f", "json").out)
    keys = [t["key"] for t in plan["threads"]]
    assert len(keys) >= 4
    for fmt in ("table", "text"):
        code, screen = _screen("thread", "erase", "-s", s, "--tenant", "acme", "--all-sessions", "--dry-run", "-f", fmt, cols=cols)
        assert code == 0, screen
        lines = _fits(screen, cols)
        assert "RECORD" not in screen
        for t in plan["threads"]:
            _whole(lines, t["key"], _z(t["first_activity"]), _z(t["last_activity"]))
        if fmt == "table":
            header = next(line for line in lines if line.startswith("thread "))
            assert re.findall(r"[a-z]+", header) == ["thread", "rows", "tables", "first", "last", "activity"]
            assert "checkpoints" in screen and "┃" in header  # the borderless frame of render/tables.py
            assert not any(line.startswith(("┏", "┗", "│ ", "┃ ")) for line in lines)  # no outer border


@pytest.mark.parametrize("cols", COLS)
def test_prune_plan_fits_and_counts_the_messages_whose_time_moves(demo, cols):
    s = str(demo)
    plan = json.loads(run("thread", "prune", "-s", s, "--all", "--dry-run", "-f", "json").out)
    moved = {t["key"]: t["timestamps_change"] for t in plan["threads"] if t.get("timestamps_change")}
    assert len(moved) >= 4
    code, screen = _screen("thread", "prune", "-s", s, "--all", "--dry-run", cols=cols)
    assert code == 0, screen
    lines = _fits(screen, cols)
    starts = [i for i, line in enumerate(lines) if line.startswith("  ") and not line.startswith("    ")]
    blocks = {}
    for n, i in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        blocks[lines[i][2:].split(": ", 1)[0] if not lines[i].startswith("  to prune") else "to prune"] = (i, end)
    for t in plan["threads"]:
        assert t["key"] in blocks, t["key"]  # the key whole at its line's start
    for key, change in moved.items():
        i, end = blocks[key]
        block = " ".join(" ".join(lines[i:end]).split())
        assert f"{change['messages']} message(s) will be dated {change['to']}" in block, block
        _whole(lines[i:end], change["to"])  # the time on one line
    total = sum(c["messages"] for c in moved.values())
    assert total == plan["summary"]["messages_redated"]
    i, end = blocks["to prune"]
    assert f"{total:,} message(s) will be dated" in " ".join(" ".join(lines[i:end]).split())


@pytest.mark.parametrize("cols", COLS)
def test_prune_run_ends_with_the_summary_and_the_receipt_file(demo, tmp_path, cols):
    receipts = tmp_path / "p.jsonl"
    code, screen = _screen("thread", "prune", "-s", str(demo), "--all", "--yes", "--receipt", str(receipts), cols=cols)
    assert code == 0, screen
    lines = _fits(screen, cols)
    records = [json.loads(line) for line in receipts.read_text().splitlines()]
    assert "receipt:" not in screen  # the file holds it: not printed again, as erase
    _whole(lines, f"receipt {records[0]['receipt_id']}:")
    for r in records[1:-1]:
        assert any(line.startswith(f"pruned {r['key']} (") for line in lines), r["key"]
    summary = " ".join(" ".join(lines).split())
    assert f"pruned {records[-1]['summary']['pruned']} thread(s)," in summary


@pytest.mark.parametrize("cols", COLS)
def test_export_line_fits(demo, tmp_path, cols):
    out = tmp_path / ("a-bundle-" + "x" * 30 + ".zip")
    code, screen = _screen("thread", "export", "-s", str(demo), "--inactive-for", "90d", "-o", str(out), cols=cols)
    assert code == 0, screen
    lines = _fits(screen, cols)
    assert any(line.startswith("exported 2 thread(s) to") for line in lines)
    if len(str(out)) <= cols:
        _whole(lines, str(out))
    else:  # wider than the terminal: broken between characters, all of it there
        assert str(out) in "".join(line for line in lines if not line.startswith("exported "))


LONG = "acme:_:" + "a-session-whose-name-is-longer-than-the-terminal-" * 3
AGES = {LONG: timedelta(days=200), "acme:_:nodate": timedelta(days=300), "acme:_:old": timedelta(days=120),
        "acme:_:now": timedelta(0)}


def _undatable(backend):
    url = backend.new_store(scenarios=False)
    write_aged(backend, url, AGES)
    rewrite_ids(backend.kind, url, "acme:_:nodate", "undatable")  # ids without a time, no ts
    return backend, url


@pytest.fixture
def undatable_store(_sqlite_backend):
    return _undatable(_sqlite_backend)


def test_an_undatable_thread_is_counted_and_never_swept(any_kind):
    backend, url = _undatable(any_kind)
    dry = json.loads(run("thread", "erase", "-s", url, "--inactive-for", "90d", "--dry-run", "-f", "json").out)
    assert {t["key"] for t in dry["threads"]} == {LONG, "acme:_:old"}
    assert dry["summary"]["undatable"] == 1 and dry["summary"]["threads"] == 2
    text = run("thread", "erase", "-s", url, "--inactive-for", "90d", "--dry-run", "-f", "text").out
    assert "undatable: 1 thread(s) whose activity cannot be dated" in text and "nodate" not in text
    # The tenant's selection counts it too; another tenant has none.
    assert json.loads(run("thread", "erase", "-s", url, "--inactive-for", "90d", "--tenant", "acme", "--dry-run",
                          "-f", "json").out)["summary"]["undatable"] == 1
    assert json.loads(run("thread", "erase", "-s", url, "--inactive-for", "90d", "--tenant", "globex", "--dry-run",
                          "-f", "json", "--missing-ok").out)["summary"]["undatable"] == 0
    r = run("thread", "erase", "-s", url, "--inactive-for", "90d", "--yes", "-f", "json")
    assert r.code == 0, r.err
    receipt = json.loads(r.out)
    assert {t["key"]: t["status"] for t in receipt["threads"]} == {LONG: "erased", "acme:_:old": "erased"}
    assert receipt["summary"]["undatable"] == 1
    with backend.saver(url) as saver:
        for key in AGES:
            left = list(saver.list({"configurable": {"thread_id": key}}))
            assert bool(left) == (key in ("acme:_:nodate", "acme:_:now")), key
    # A second sweep: nothing idle is left, the undatable thread is still counted and still there.
    again = json.loads(run("thread", "erase", "-s", url, "--inactive-for", "90d", "--yes", "-f", "json").out)
    assert again["summary"]["erased"] == 0 and again["summary"]["undatable"] == 1

    # A prune by time window leaves it alone too, and says so.
    pruned = json.loads(run("thread", "prune", "-s", url, "--inactive-for", "90d", "--dry-run", "-f", "json").out)
    assert pruned["summary"]["undatable"] == 1 and "acme:_:nodate" not in {t["key"] for t in pruned["threads"]}
    text = run("thread", "prune", "-s", url, "--inactive-for", "90d", "--dry-run", "-f", "text").out
    assert "undatable: 1 thread(s) whose activity cannot be dated" in text


@pytest.mark.parametrize("cols", COLS)
def test_an_undatable_line_and_a_key_wider_than_the_terminal(undatable_store, cols):
    _, url = undatable_store
    code, screen = _screen("thread", "erase", "-s", url, "--inactive-for", "90d", "--dry-run", cols=cols)
    assert code == 0, screen
    lines = _fits(screen, cols)
    undatable = [line for line in lines if line.startswith("  undatable: ")]
    assert len(undatable) == 1 and "1 thread(s)" in undatable[0], screen
    assert len(LONG) + 1 > cols
    # The one key wider than the terminal: broken between characters, at the left edge, all there.
    assert (LONG + ":") in "".join(lines), screen
    _whole(lines, "acme:_:old:")


@pytest.mark.parametrize("cols", COLS)
def test_not_found_suggestions_fit(demo, tmp_path, cols):
    # Two missing keys: a line of suggestions each, then the error (one missing key is the error
    # line alone, its suggestions in it).
    code, screen = _screen("thread", "export", "-s", str(demo), "-t", "acme:_:s-00", "-t", "acme:eu:s-00",
                           "-o", str(tmp_path / "x.zip"), cols=cols)
    assert code == 3, screen
    lines = [line for line in _lines(screen) if not line.startswith("symfonic: error:")]  # errors stay one line
    assert all(len(line) <= cols for line in lines), lines
    assert any(line.startswith("symfonic: not found: 'acme:_:s-00'; did you mean:") for line in lines), lines
    for key in ("acme:_:s-001", "acme:eu:s-002", "acme:eu:s-040"):
        _whole(lines, f"'{key}'")


def test_fit_breaks_only_what_is_wider_than_the_line():
    from symfonic_cli.render.fit import Whole, fit

    key = "k" * 100
    text = fit([Whole(key + ":"), "some free text that wraps", Whole("2026-12-02T04:59:56.720570Z")], 40, indent="  ")
    lines = text.split("\n")
    assert all(len(line) <= 40 for line in lines)
    assert key + ":" in "".join(lines) and any("2026-12-02T04:59:56.720570Z" in line for line in lines)
    spaced = fit(["a", Whole("tenant:_:a key with spaces")], 28)
    assert "tenant:_:a key with spaces" in spaced.split("\n")[-1]
    assert fit(["a  b", Whole("x y")], None, indent="  ") == "  a b x y"
