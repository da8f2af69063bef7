"""The plan and the question a person confirms on a terminal, byte for byte, as recorded before the
rendering moved out of the feature packages (issue #35 item 2): erase (a request, a retention
sweep) and prune on the real binary on a pseudo-terminal at 80 and 120 columns, answered wrongly
(exit 6, nothing deleted), normalised as tests/api/test_change_goldens.py does.
``SYMFONIC_RECORD_GOLDENS=1`` writes the files instead of comparing."""

from __future__ import annotations

import shutil
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.api.test_change_goldens import HERE, ROOT, STORE, _normalised, matches_golden
from tests.support.terminal import Session

CASES: dict[str, tuple[str, ...]] = {
    "erase": ("thread", "erase", "-s", "{db}", "--tenant", "acme", "--all-sessions"),
    "erase-one": ("thread", "erase", "-s", "{db}", "acme:eu:s-002"),
    "sweep": ("thread", "erase", "-s", "{db}", "--inactive-since", "2026-09-01", "--batch-size", "2"),
    "prune": ("thread", "prune", "-s", "{db}", "--all", "--keep", "2"),
}


@pytest.mark.parametrize("cols", [80, 120])
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_confirmation_on_a_terminal_is_the_recorded_one(name, cols):
    # A directory whose name has one length on every run: the plan wraps the store's path.
    tmp_path = Path(tempfile.mkdtemp(prefix="symfonic-confirm-", dir="/tmp"))
    try:
        _compare(name, cols, tmp_path)
    finally:
        shutil.rmtree(tmp_path)


def _compare(name: str, cols: int, tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    shutil.copyfile(STORE, db)
    argv = [sys.executable, "-m", "symfonic_cli", *ROOT, *(a.format(db=db) for a in CASES[name])]
    started = datetime.now(timezone.utc).replace(microsecond=0)
    with Session(argv, cols=cols, rows=24) as s:
        s.read_until("Type ")
        s.read_until(": ", timeout=30)
        s.send(b"no\r")
        code = s.wait()
        got = _normalised(f"exit {code}\n{s.screen}", started, str(tmp_path))
    matches_golden(HERE / f"confirm-{name}-{cols}.txt", got)
