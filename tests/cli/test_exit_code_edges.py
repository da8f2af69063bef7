"""No exit 1 at the edges (issue #21 item 8): config, rc files, a missing driver, --tz.

Each case was an unexpected error (exit 1) before; each now has its documented code and one line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import run


@pytest.mark.parametrize("column", ['["thread_id", "x"]', '{name = "thread_id"}'])
def test_erase_extra_column_as_a_list_or_table_is_a_config_error(sqlite_store, tmp_path, column):
    config = tmp_path / "config.toml"
    config.write_text(f"[stores.prod]\nurl = {json.dumps(str(sqlite_store))}\nerase_extra = [{{table = \"conversations\", column = {column}}}]\n")
    for extra in (["--dry-run"], ["--yes"]):
        r = run("thread", "erase", "-s", "prod", "--thread", "globex:_:s-100", *extra, env={"SYMFONIC_CONFIG": str(config)})
        assert r.code == 2, r.err
        assert r.err.startswith("symfonic: error: erase_extra[0]: column must be a plain identifier") and r.err.count("\n") == 1
    assert run("transcript", "show", "-s", str(sqlite_store), "-t", "globex:_:s-100").code == 0


def _home(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache")}


def test_completion_install_keeps_a_start_up_file_in_another_encoding(tmp_path):
    env = _home(tmp_path)
    rc = Path(env["HOME"]) / ".bashrc"
    old = "# Grüße in Latin-1\nexport A=1\n".encode("latin-1")
    rc.write_bytes(old)
    r = run("completion", "install", "bash", env=env)
    assert r.code == 0, r.err
    data = rc.read_bytes()
    assert data.startswith(old) and data.count(b"# symfonic completion") == 1
    assert run("completion", "install", "bash", env=env).code == 0
    assert rc.read_bytes() == data  # the line is added once


def test_completion_install_start_up_file_that_cannot_be_read_or_written(tmp_path):
    env = _home(tmp_path)
    rc = Path(env["HOME"]) / ".bashrc"
    rc.mkdir()  # a folder where the file is expected
    r = run("completion", "install", "bash", env=env)
    assert r.code == 4 and r.err.startswith(f"symfonic: error: cannot read {rc}: ") and r.err.count("\n") == 1, r.err
    rc.rmdir()
    rc.symlink_to("/proc/version")  # readable, never writable (even by root)
    r = run("completion", "install", "bash", env=env)
    assert r.code == 4 and r.err.startswith(f"symfonic: error: cannot write {rc}: ") and r.err.count("\n") == 1, r.err


def test_completion_install_with_a_file_where_a_folder_is_expected(tmp_path):
    env = _home(tmp_path)
    Path(env["XDG_CONFIG_HOME"]).write_text("not a folder\n")
    r = run("completion", "install", "fish", env=env)
    assert r.code == 4 and r.err.startswith("symfonic: error: cannot write ") and r.err.count("\n") == 1, r.err


# An import blocker for a real process: `import pymongo` (or bson) fails as in an install without
# the mongodb extra.
_BLOCKER = """\
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("pymongo", "bson", "gridfs"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, _Block())
"""


@pytest.mark.parametrize("args", [
    ["threads", "list"],
    ["transcript", "show", "-t", "a:_:b"],
    ["thread", "erase", "-t", "a:_:b", "--dry-run"],
])
def test_mongodb_store_without_pymongo_names_the_install_command(tmp_path, args):
    (tmp_path / "sitecustomize.py").write_text(_BLOCKER)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    blocked = subprocess.run([sys.executable, "-c", "import pymongo"], env=env, capture_output=True)
    assert blocked.returncode != 0  # the blocker works
    url = "mongodb://127.0.0.1:9/agents"
    proc = subprocess.run([sys.executable, "-m", "symfonic_cli", *args[:2], "--store", url, *args[2:]],
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr == "symfonic: error: MongoDB support is not installed (no module 'pymongo') (pip install \"symfonic[mongodb]\")\n"


@pytest.mark.parametrize("tz", ["+25:00", "-24:00", "+23:60", "+99:99"])
def test_tz_offset_out_of_range_names_the_range(sqlite_store, tz):
    for r in (run("--tz", tz, "threads", "list", "-s", str(sqlite_store)), run("threads", "list", "-s", str(sqlite_store), env={"SYMFONIC_TZ": tz})):
        assert r.code == 2, r.err
        assert f"offset '{tz}' is out of range: use -23:59 to +23:59" in r.err and "timedelta" not in r.err and r.err.count("\n") == 1


def test_tz_offsets_at_the_edges_of_the_range(sqlite_store):
    for tz in ("+23:59", "-23:59", "+00:00"):
        assert run("--tz", tz, "threads", "list", "-s", str(sqlite_store)).code == 0
