"""One vocabulary (issue #15): times in UTC with Z, lists as JSON lists, sizes human in tables and
bytes in JSON, yes/no in tables, one --grace default, a text format on compat too."""

from __future__ import annotations

import json
import re

from tests.support.cli import run
from tests.support.terminal import on_terminal

HUMAN = re.compile(r"^\d+(\.\d)? (B|KiB|MiB|GiB)$")


def test_store_info_lists_and_sizes(any_kind):
    url = any_kind.new_store()
    info = json.loads(run("store", "info", "-s", url, "-f", "json").out)
    lists = [k for k in info if k == "tables" or k.endswith("_indexes")]
    assert lists and all(isinstance(info[k], list) and info[k] for k in lists)
    sizes = {k: v for k, v in info.items() if k.endswith("_size") and isinstance(v, int)}
    assert sizes
    table = run("store", "info", "-s", url, "-f", "table", env={"COLUMNS": "200"}).out
    for key in sizes:
        # key/value tables have the borderless frame of the others: "label │ value"
        row = next(line for line in table.splitlines() if line.count("│") == 1 and line.split("│")[0].strip().replace(" ", "_") == key)
        assert HUMAN.match(row.split("│")[1].strip()), row
    if "tables" in info:
        assert ", ".join(info["tables"]) in table


def test_threads_list_size_is_human_in_a_table(sqlite_master):
    rows = json.loads(run("threads", "list", "-s", str(sqlite_master), "--with-size", "-f", "json").out)
    assert all(isinstance(r["size_bytes"], int) for r in rows)
    code, screen = on_terminal("threads", "list", "-s", str(sqlite_master), "--with-size", "--no-pager", "--color", "never", cols=40, rows=900)
    shown = [line.split(":", 1)[1].strip() for line in screen.splitlines() if line.startswith("size:")]  # the table header of size_bytes
    assert len(shown) == len(rows) and all(HUMAN.match(s) for s in shown)


def test_compat_has_text_and_yes_no(sqlite_master):
    report = run("compat", "report", "-s", str(sqlite_master), "-f", "text")
    assert report.code == 0 and "\t" not in report.out.splitlines()[0]
    verdicts = [line for line in report.out.splitlines() if "can read all" in line]
    assert verdicts and all(line.split()[-1] in ("yes", "no") for line in verdicts)
    shown = run("compat", "show", "-s", str(sqlite_master), "--thread", "acme:_:s-001", "-f", "TEXT")
    assert shown.code == 0 and shown.out.split("\n", 1)[0].split("\t")[0] == "checkpoint_id"
    assert set(line.split("\t")[8] for line in shown.out.splitlines()[1:]) <= {"yes", "no"}
    as_json = json.loads(run("compat", "show", "-s", str(sqlite_master), "--thread", "acme:_:s-001", "-f", "json").out)
    assert all(isinstance(v["safe_boundary"], bool) for v in as_json)


def test_one_grace_default():
    defaults = []
    for argv in (("compat", "report"), ("thread", "erase")):
        text = run(*argv, "--help", env={"COLUMNS": "300"}).out
        defaults += re.findall(r"--grace\b.*?\[default: (\w+)\]", text, re.S)[:1]
    assert defaults == ["15m", "15m"]
