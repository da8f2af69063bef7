"""What a person reads in ``symfonic browse`` on the demo store, at 80x24 and 120x40, in colour and
under NO_COLOR: the filter form shows what is typed into its focused field, and the ``error``
status and the "error in" heading stand out at 4.5:1 or more against what is under them."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

import symfonic_cli
from tests.support.browser import browser, fixed_time_store, newest_plus, screen_text, settle

SIZES = {"80x24": (80, 24), "120x40": (120, 40)}
MODES = ("colour", "NO_COLOR")
TYPED = "interrupted,error"
# f, Tab twice (tenant, sub-tenant) to the status field, the CLI's comma form typed into it.
TO_STATUS = ("f", "tab", "tab", *TYPED)


@pytest.fixture(scope="module")
def demo_master(tmp_path_factory) -> Path:
    from symfonic_cli.demo import create_demo_store

    path = tmp_path_factory.mktemp("browse-readable") / "demo.db"
    fixed_time_store(create_demo_store, path)
    return path


def _app(master: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> tuple[Any, Any]:
    # Textual reads NO_COLOR when the app is made (``symfonic browse --color never`` sets it).
    if mode == "NO_COLOR":
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    shutil.copyfile(master, tmp_path / "demo.db")
    monkeypatch.chdir(tmp_path)
    store = symfonic_cli.open_store("demo.db")
    return store, browser(store, now=newest_plus(store), store_arg="demo.db")


async def _press(pilot: Any, keys: tuple[str, ...]) -> None:
    await settle(pilot)
    for key in keys:
        await pilot.press(key)
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES, ids=list(SIZES))
@pytest.mark.parametrize("mode", MODES)
def test_the_focused_filter_field_shows_what_is_typed(demo_master, size, mode, tmp_path, monkeypatch):
    store, app = _app(demo_master, tmp_path, monkeypatch, mode)

    async def drive() -> None:
        async with app.run_test(size=SIZES[size]) as pilot:
            await _press(pilot, TO_STATUS)
            field = app.screen.query_one("#status")
            assert field.has_focus and field.value == TYPED
            # Every field one row high, the focused one too: the form keeps its height.
            assert [f.region.height for f in app.screen.query("Input")] == [1] * 5
            screen = screen_text(app)
            assert TYPED in screen, screen
            await pilot.press("tab")  # focus moves on: the typed text stays, the next field's label shows
            await settle(pilot)
            screen = screen_text(app)
            assert TYPED in screen and "active within (e.g. 7d)" in screen, screen

    try:
        asyncio.run(drive())
    finally:
        store.close()


@pytest.mark.parametrize("size", SIZES, ids=list(SIZES))
@pytest.mark.parametrize("mode", MODES)
def test_the_filter_form_snapshot(snap_compare, demo_master, size, mode, tmp_path, monkeypatch):
    store, app = _app(demo_master, tmp_path, monkeypatch, mode)
    try:
        assert snap_compare(app, terminal_size=SIZES[size], run_before=lambda pilot: _press(pilot, TO_STATUS))
    finally:
        store.close()
