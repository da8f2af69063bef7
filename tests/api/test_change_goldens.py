"""The changing commands' outputs and receipts, byte for byte, as recorded before the plan/execute
split (issue #35 item 2): erase (requests and a retention sweep), prune, export and migrate in
table, text and json, dry runs and real runs, each on a fresh copy of one fixed store
(tests/goldens/changes/store.db, written once by ``symfonic demo``: its ids and times are fixed;
no thread in it is active within erase's 15-minute grace any more).

Only what changes from run to run is normalised: receipt ids, times of the run itself (at or after
the test started; the store's own times stay as they are), elapsed seconds, this run's directory,
the tool's version.
``SYMFONIC_RECORD_GOLDENS=1`` writes the files instead of comparing (record on the code before a
change, then compare after it).
"""

from __future__ import annotations

import os
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.support.cli import run

HERE = Path(__file__).resolve().parent.parent / "goldens" / "changes"
STORE = HERE / "store.db"
RECORD = os.environ.get("SYMFONIC_RECORD_GOLDENS") == "1"
ROOT = ("--tz", "UTC", "--absolute-time", "--color", "never")
FORMATS = ("table", "text", "json")
RECEIPT = ("--operator", "ops@example.com", "--ticket", "T-7", "--receipt", "{dir}/receipts.jsonl")

# name -> the command's arguments ({db}: the store's copy, {dir}: the run's directory)
CASES: dict[str, tuple[str, ...]] = {}
for fmt in FORMATS:
    CASES[f"erase-plan-{fmt}"] = ("thread", "erase", "-s", "{db}", "--tenant", "acme", "--all-sessions", "--dry-run", "-f", fmt)
    CASES[f"erase-{fmt}"] = ("thread", "erase", "-s", "{db}", "--tenant", "globex", "--all-sessions", "--yes", *RECEIPT, "-f", fmt)
    CASES[f"erase-missing-{fmt}"] = ("thread", "erase", "-s", "{db}", "--thread", "acme:eu:s-002", "--thread", "acme:eu:s-02",
                                     "--missing-ok", "--yes", *RECEIPT, "-f", fmt)
    CASES[f"sweep-plan-{fmt}"] = ("thread", "erase", "-s", "{db}", "--inactive-since", "2026-09-01", "--dry-run", "-f", fmt)
    CASES[f"sweep-{fmt}"] = ("thread", "erase", "-s", "{db}", "--inactive-since", "2026-09-01", "--yes", *RECEIPT, "-f", fmt)
    CASES[f"prune-plan-{fmt}"] = ("thread", "prune", "-s", "{db}", "--all", "--keep", "2", "--dry-run", "-f", fmt)
    CASES[f"prune-{fmt}"] = ("thread", "prune", "-s", "{db}", "--all", "--keep", "2", "--yes", *RECEIPT, "-f", fmt)
    CASES[f"export-{fmt}"] = ("thread", "export", "-s", "{db}", "--tenant", "acme", "--all-sessions", "--output", "{dir}/bundle", "-f", fmt)
    CASES[f"migrate-plan-{fmt}"] = ("migrate", "--from", "{db}", "--to", "{dir}/copy.db", "--all", "--dry-run", "-f", fmt)
    CASES[f"migrate-{fmt}"] = ("migrate", "--from", "{db}", "--to", "{dir}/copy.db", "--all", "--init-target", "-f", fmt)
# Added before the rendering moved out of the feature packages (issue #35 item 2): jsonl streams
# (a sweep paged two threads at a time), the plans shown when no terminal can confirm them.
for name in ("erase-plan", "erase", "sweep-plan", "sweep", "prune-plan", "prune"):
    CASES[f"{name}-jsonl"] = (*CASES[f"{name}-json"][:-1], "jsonl")
CASES["sweep-batched-jsonl"] = (*CASES["sweep-jsonl"][:-2], "--batch-size", "2", "-f", "jsonl")
CASES["sweep-plan-batched-text"] = (*CASES["sweep-plan-text"][:-2], "--batch-size", "2", "-f", "text")
CASES["erase-not-confirmed"] = ("thread", "erase", "-s", "{db}", "--tenant", "acme", "--all-sessions", "-f", "text")
CASES["sweep-not-confirmed"] = ("thread", "erase", "-s", "{db}", "--inactive-since", "2026-09-01", "-f", "text")
CASES["erase-not-found"] = ("thread", "erase", "-s", "{db}", "acme:eu:s-02", "--yes", "--operator", "ops@example.com", "-f", "text")
CASES["prune-not-confirmed"] = ("thread", "prune", "-s", "{db}", "--all", "-f", "text")

_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\b")  # uuid4: receipt ids
_TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:\d\d)?")
_SECONDS = re.compile(r"\b\d+(?:\.\d+)?(?= ?s\b)")


def _normalised(text: str, started: datetime, where: str) -> str:
    from symfonic_cli import __version__

    text = text.replace(where, "<dir>").replace(f'"tool_version": "{__version__}"', '"tool_version": "<version>"')
    text = _UUID.sub("<uuid4>", text)

    def when(m: re.Match) -> str:
        raw = m.group(0)
        try:
            t = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        except ValueError:
            return raw
        t = t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)
        return "<now>" if t >= started else raw  # the store's own times are fixed: kept

    text = _TIME.sub(when, text)
    return _SECONDS.sub("<n>", text) if "elapsed" in text or "took" in text else text


def _files(folder: Path) -> str:
    """Every file the run wrote (receipts, a bundle's manifest and transcripts), by name."""
    out = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name not in ("store.db",) and not p.name.startswith(("store.db-", "copy.db"))):
        out.append(f"--- {path.relative_to(folder)}\n{path.read_text(encoding='utf-8', errors='replace')}")
    return "\n".join(out)


def outputs(name: str, folder: Path) -> str:
    db = folder / "store.db"
    shutil.copyfile(STORE, db)
    if name.startswith("migrate-plan"):  # a dry run onto a copy of the store: every thread already there
        shutil.copyfile(STORE, folder / "copy.db")
    args = [a.format(db=db, dir=folder) for a in CASES[name]]
    started = datetime.now(timezone.utc).replace(microsecond=0)
    r = run(*ROOT, *args, env={"COLUMNS": "80", "LINES": "24"})  # a pipe's width, whatever the test's terminal
    doc = f"exit {r.code}\n--- stdout\n{r.out}--- stderr\n{r.err}{_files(folder)}"
    return _normalised(doc, started, str(folder))


@pytest.mark.parametrize("name", sorted(CASES))
def test_outputs_and_receipts_are_the_recorded_ones(name, tmp_path):
    matches_golden(HERE / f"{name}.txt", outputs(name, tmp_path))


def matches_golden(golden: Path, got: str) -> None:
    """``got`` is the recorded text (with SYMFONIC_RECORD_GOLDENS=1: becomes it)."""
    if RECORD:
        golden.write_text(got, encoding="utf-8")
        return
    assert golden.exists(), f"no golden {golden.name}: record it (SYMFONIC_RECORD_GOLDENS=1) on the code before the change"
    assert got == golden.read_text(encoding="utf-8")
