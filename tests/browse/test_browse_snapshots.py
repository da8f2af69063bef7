"""Every screen of ``symfonic browse`` at 80x24 (the design size) and 120x40, compared with SVG
snapshots (pytest-textual-snapshot) taken on the demo store and on a hostile store.

Both stores are written by real graphs with LangGraph's checkpoint clock fixed
(``tests/support/browser.py``), and the ages are measured from a fixed clock, so every id, time and
age on the screen is the same in every run. Update the baselines with ``--snapshot-update`` after
looking at the difference (``snapshot_report.html``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import symfonic_cli
from tests.support.browser import browser, fixed_time_store, newest_plus, settle

SIZES = {"80x24": (80, 24), "120x40": (120, 40)}
# The demo's listing, newest first: acme:_:s-001 (tool calls, two releases) is the fifth row.
TO_S001 = ("down", "down", "down", "down")
SCREENS: dict[str, tuple[str, ...]] = {
    "threads": (),
    "search": ("slash", *"refund", "enter"),
    "filter": ("f",),
    "transcript": (*TO_S001, "enter"),
    # docs/guide/browse.md's story: the search for the complaint, Enter on its first hit (the refund).
    "refund": ("slash", *"order", "space", *"1042", "enter", "enter"),
    "refund-state": ("slash", *"order", "space", *"1042", "enter", "enter", "s"),
    "transcript-tools": (*TO_S001, "enter", "t"),
    "resume": (*TO_S001, "enter", "r"),
    "state-interrupted": ("down", "s"),
    "state-error": ("s",),
    "history": (*TO_S001, "h"),
    "diff": (*TO_S001, "h", "d"),
    "compat": ("c",),
    "help": ("question_mark",),
    "command": (*TO_S001, "enter", "x"),
}
# Not here: store usage. Its byte counts differ by a few bytes between two writes of the same store
# (LangGraph serialises an input message's write in a background thread, before or after
# add_messages gives it an id); tests/browse/test_browse_app.py checks that screen on every kind.
HOSTILE_SCREENS = ("threads", "transcript", "state", "history", "diff")


@pytest.fixture(scope="module")
def demo_master(fixed_demo_master) -> Path:  # each test copies it
    return fixed_demo_master


@pytest.fixture(scope="module")
def hostile_master(tmp_path_factory) -> Path:
    from tests.support.backends import get
    from tests.support.hostile_labels import write

    path = tmp_path_factory.mktemp("browse-hostile") / "hostile.db"
    backend = get("sqlite")
    assert backend is not None
    with backend.saver(str(path)) as saver:
        saver.setup()
        fixed_time_store(write, saver)
    return path


def _snapshot(snap_compare: Any, master: Path, name: str, keys: tuple[str, ...], size: tuple[int, int],
              tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> bool:
    # The store by a relative name, so the title bar reads the same wherever the test runs.
    shutil.copyfile(master, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    store = symfonic_cli.open_store(name)
    try:
        app = browser(store, now=newest_plus(store), store_arg=name)

        async def drive(pilot: Any) -> None:
            await settle(pilot)
            for key in keys:
                await pilot.press(key)
                await settle(pilot)

        return bool(snap_compare(app, terminal_size=size, run_before=drive))
    finally:
        store.close()


@pytest.mark.parametrize("size", SIZES, ids=list(SIZES))
@pytest.mark.parametrize("screen", SCREENS, ids=list(SCREENS))
def test_demo_screens(snap_compare, demo_master, screen, size, tmp_path, monkeypatch):
    assert _snapshot(snap_compare, demo_master, "demo.db", SCREENS[screen], SIZES[size], tmp_path, monkeypatch)


HOSTILE_KEYS = {"threads": (), "transcript": ("enter",), "state": ("s",), "history": ("h",), "diff": ("h", "d")}


@pytest.mark.parametrize("size", SIZES, ids=list(SIZES))
@pytest.mark.parametrize("screen", HOSTILE_SCREENS, ids=list(HOSTILE_SCREENS))
def test_hostile_screens(snap_compare, hostile_master, screen, size, tmp_path, monkeypatch):
    assert _snapshot(snap_compare, hostile_master, "hostile.db", HOSTILE_KEYS[screen], SIZES[size], tmp_path, monkeypatch)


def test_the_guide_shows_screens_the_snapshots_hold():
    """docs/guide/browse.md's screenshots are snapshots of this suite, byte for byte (so they cannot
    show a screen the browser no longer draws)."""
    here = Path(__file__).parent / "__snapshots__" / Path(__file__).stem
    guide = Path(__file__).resolve().parents[2] / "docs" / "guide"
    text = (guide / "browse.md").read_text(encoding="utf-8")
    for image, snapshot in (("browse-threads.svg", "threads-80x24"), ("browse-transcript.svg", "refund-80x24")):
        assert f"img/{image}" in text
        assert (guide / "img" / image).read_bytes() == (here / f"test_demo_screens[{snapshot}].svg").read_bytes()
