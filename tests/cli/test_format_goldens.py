"""The reading commands' output in every format they take, byte for byte, as recorded before the
format decisions moved into render/writers.py (issue #46 item 4): each command whose code chose a
syntax by the format's name, on the fixed store of the change goldens (tests/goldens/changes/store.db),
read-only. ``SYMFONIC_RECORD_GOLDENS=1`` writes the files instead of comparing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.api.test_change_goldens import RECORD, ROOT, STORE
from tests.support.cli import run

HERE = Path(__file__).resolve().parent.parent / "goldens" / "formats"
KEY = "acme:_:s-001"
FORMATS = ("table", "text", "json", "jsonl")
RECORD_FORMATS = (*FORMATS, "csv")

CASES: dict[str, tuple[str, ...]] = {}
for fmt in FORMATS:
    CASES[f"diff-{fmt}"] = ("thread", "diff", "-s", "{db}", KEY, "-3", "-1", "-f", fmt)
    CASES[f"resume-window-{fmt}"] = ("transcript", "show", "-s", "{db}", KEY, "--resume-window", "-f", fmt)
    CASES[f"retained-{fmt}"] = ("transcript", "show", "-s", "{db}", KEY, "--retained", "-f", fmt)
    CASES[f"compat-show-one-{fmt}"] = ("compat", "show", "-s", "{db}", KEY, "--checkpoint", "{checkpoint}", "-f", fmt)
    CASES[f"compat-report-{fmt}"] = ("compat", "report", "-s", "{db}", "-f", fmt)
    CASES[f"compat-report-thread-{fmt}"] = ("compat", "report", "-s", "{db}", "--thread", KEY, "-f", fmt)
    CASES[f"compat-report-by-thread-{fmt}"] = ("compat", "report", "-s", "{db}", "--by-thread", "-f", fmt)
    CASES[f"thread-show-{fmt}"] = ("thread", "show", "-s", "{db}", KEY, "-f", fmt)
    CASES[f"store-usage-{fmt}"] = ("store", "usage", "-s", "{db}", "-f", fmt)
    CASES[f"migrate-plan-{fmt}"] = ("migrate", "--from", "{db}", "--to", "{dir}/copy.db", "--all", "--dry-run", "-f", fmt)
for fmt in RECORD_FORMATS:
    CASES[f"threads-list-{fmt}"] = ("threads", "list", "-s", "{db}", "-f", fmt)
    CASES[f"threads-list-first-{fmt}"] = ("threads", "list", "-s", "{db}", "--columns", "key,first_message", "-f", fmt)
    CASES[f"history-{fmt}"] = ("thread", "history", "-s", "{db}", KEY, "-f", fmt)
    CASES[f"transcript-{fmt}"] = ("transcript", "show", "-s", "{db}", KEY, "-f", fmt)


def outputs(name: str, folder: Path) -> str:
    """The command's exit code, stdout and stderr, run in ``folder`` on a copy named store.db (a
    relative path: the same in every run, however a table wraps it)."""
    shutil.copyfile(STORE, folder / "store.db")
    if name.startswith("migrate-plan"):  # a dry run onto a copy of the store: every thread already there
        shutil.copyfile(STORE, folder / "copy.db")
    latest = run("thread", "history", "-s", "store.db", KEY, "-f", "jsonl").out.partition("\n")[0]
    checkpoint = json.loads(latest)["checkpoint_id"]
    args = [a.format(db="store.db", dir=".", checkpoint=checkpoint) for a in CASES[name]]
    r = run(*ROOT, *args, env={"COLUMNS": "80", "LINES": "24"})
    return f"exit {r.code}\n--- stdout\n{r.out}--- stderr\n{r.err}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_format_writes_what_it_wrote(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    got = outputs(name, tmp_path).encode("utf-8")  # bytes: CSV's CRLF line ends are part of it
    golden = HERE / f"{name}.txt"
    if RECORD:
        golden.write_bytes(got)
        return
    assert golden.exists(), f"no golden {golden.name}: record it (SYMFONIC_RECORD_GOLDENS=1) on the code before the change"
    assert got == golden.read_bytes()
