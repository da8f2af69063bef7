"""The browse tests drive the app headless with Textual's Pilot."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _pilot_idle_checks_often(monkeypatch):
    """Pilot waits after each key until the process looks idle, judged in slices of 20 ms: most of a
    browse test's time was those slices. 5 ms slices (with the same CPU-per-slice ratio for "idle")
    keep the rule and shorten the wait; a test still settles its store reads explicitly
    (tests/support/browser.py's ``settle``)."""
    import textual._wait as wait

    monkeypatch.setattr(wait, "SLEEP_GRANULARITY", 1 / 200)
    monkeypatch.setattr(wait, "SLEEP_IDLE", 1 / 200 / 20)
