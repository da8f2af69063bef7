"""Issue #47, friction 3: a changing command run by a person ends with a short summary, on the real
binary on a terminal at 80 and 120 columns (colour on and off): what was done, where the receipt is
kept or that ``--receipt`` keeps one, and with ``--compact`` the file's size before and after, in
place of the 50-70-line JSON receipt. ``-f json`` and pipes keep the receipt as it was
(tests/api/test_change_goldens.py holds their bytes)."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from tests.support.cli import run
from tests.support.terminal import on_terminal

SETTINGS = {"80-colour": (80, {}), "120-no-colour": (120, {"NO_COLOR": "1"})}
SGR = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def demo(demo_master, tmp_path_factory):  # the module's own copy
    path = tmp_path_factory.mktemp("changes-demo") / "demo.db"
    shutil.copyfile(demo_master, path)
    return path


def _copy(demo, tmp_path, name):
    shutil.copyfile(demo, tmp_path / name)
    return str(tmp_path / name)


def _words(setting: str, *args: str) -> str:
    cols, env = SETTINGS[setting]
    code, screen = on_terminal(*args, cols=cols, rows=200, env=env)
    assert code == 0 and "Traceback" not in screen, screen
    return " ".join(SGR.sub("", screen).split())


@pytest.mark.parametrize("setting", SETTINGS)
def test_a_prune_with_compact_ends_with_a_summary_and_the_sizes(setting, demo, tmp_path):
    shown = _words(setting, "thread", "prune", "--store", _copy(demo, tmp_path, "a.db"), "--all", "--yes", "--compact")
    piped = run("thread", "prune", "--store", _copy(demo, tmp_path, "b.db"), "--all", "--yes", "--compact", "-f", "json")
    doc = json.loads(piped.out)
    before, after = doc["compact"]["bytes_before"]["file"], doc["compact"]["bytes_after"]["file"]
    assert '"receipt_id"' not in shown and "receipt:" not in shown, shown
    assert "pruned 8 thread(s)" in shown
    assert f"compacted: file {before:,} \u2192 {after:,} bytes" in shown, shown
    assert "not kept; --receipt FILE appends it to an audit file, -f json prints it" in shown


@pytest.mark.parametrize("setting", SETTINGS)
def test_an_erase_with_a_receipt_file_says_where_it_is(setting, demo, tmp_path):
    receipt = tmp_path / "erase.jsonl"
    shown = _words(setting, "thread", "erase", "--store", _copy(demo, tmp_path, "a.db"), "acme:_:s-001", "--yes",
                   "--receipt", str(receipt))
    assert '"receipt_id"' not in shown and "erased 1 thread(s)" in shown, shown
    receipt_id = json.loads(receipt.read_text().splitlines()[0])["receipt_id"]
    # The path whole, though broken across lines where it is wider than the terminal.
    assert f"receipt{receipt_id}:{receipt}" in shown.replace(" ", "") and "not kept" not in shown, shown


def test_in_a_pipe_the_whole_receipt_is_printed_as_before(demo, tmp_path):
    piped = run("thread", "prune", "--store", _copy(demo, tmp_path, "a.db"), "--all", "--yes", "--compact")
    assert piped.code == 0 and "\nreceipt:\n{" in piped.out and '"receipt_id"' in piped.out
    assert "not kept" not in piped.out and "compacted:" not in piped.out
