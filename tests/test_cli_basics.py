"""The command itself: help without heavy imports, version, completions, exit codes, colour."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from symfonic_cli import __version__
from tests.support.cli import run, run_process

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("langgraph", "langchain", "langchain_core", "psycopg", "pymongo", "ormsgpack", "pydantic")


def test_help_imports_nothing_heavy():
    code = (
        "import sys\n"
        "from symfonic_cli.cli.app import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        f"heavy = [m for m in sys.modules if m.split('.')[0] in {HEAVY!r}]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out
    for group in ("transcript", "threads", "store", "demo"):
        assert group in out


def test_subcommand_help_imports_nothing_heavy():
    for args in (["transcript", "show", "--help"], ["threads", "list", "--help"], ["store", "info", "--help"]):
        code = (
            "import sys\nfrom symfonic_cli.cli.app import main\n"
            f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
            f"print('HEAVY', [m for m in sys.modules if m.split('.')[0] in {HEAVY!r}])\n"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        assert "HEAVY []" in out, args


def test_version_and_module_entry_point():
    res = run_process("--version")
    assert res.code == 0 and res.out.strip() == f"symfonic {__version__}"


def test_no_args_shows_help():
    res = run()
    assert "transcript" in res.out + res.err


def test_unknown_command_is_usage_error():
    res = run("frobnicate")
    assert res.code == 2 and res.err.startswith("symfonic: error:") and "Traceback" not in res.err


def test_completion_scripts_are_current():
    from symfonic_cli.completions import SHELLS, script

    for shell, name in SHELLS.items():
        path = ROOT / "completions" / name
        assert path.exists(), f"missing {path}: run python -m symfonic_cli.completions"
        assert path.read_text() == script(shell), f"{path} is stale: run python -m symfonic_cli.completions"


def test_completion_completes_commands_and_options():
    env = {**os.environ, "_SYMFONIC_COMPLETE": "complete_bash", "COMP_WORDS": "symfonic tr", "COMP_CWORD": "1"}
    out = subprocess.run([sys.executable, "-m", "symfonic_cli"], capture_output=True, text=True, env=env).stdout
    assert out.split() == ["transcript"]
    env.update(COMP_WORDS="symfonic transcript show --sp", COMP_CWORD="3")
    out = subprocess.run([sys.executable, "-m", "symfonic_cli"], capture_output=True, text=True, env=env).stdout
    assert "--speaker" in out.split()


def test_no_color_and_plain_pipe(sqlite_master):
    res = run_process("threads", "list", "--store", str(sqlite_master), "--format", "table", env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert res.code == 0 and "\x1b" not in res.out


def test_debug_shows_traceback(tmp_path):
    res = run_process("--debug", "threads", "list", "--store", str(tmp_path / "missing.db"))
    assert res.code != 0 and "Traceback" in res.err
    res = run_process("threads", "list", "--store", str(tmp_path / "missing.db"))
    assert res.code == 4 and "Traceback" not in res.err and len(res.err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "args",
    [
        "transcript show --thread acme:eu:s-002 --format jsonl",
        "threads list --format jsonl",  # the quick route
        "--connect-timeout 5 threads list --format jsonl",  # the same through typer
    ],
)
def test_broken_pipe_is_quiet(sqlite_master, args):
    """The reader is gone before the first write (``| true``): no traceback, no message, and
    the same exit code, 1, on every route (click's, for the commands it runs)."""
    cmd = f"{sys.executable} -m symfonic_cli {args} --store {sqlite_master}"
    proc = subprocess.run(["bash", "-c", f"{cmd} | true; echo rc=${{PIPESTATUS[0]}}"], capture_output=True, text=True, timeout=60)
    assert proc.stderr == "", proc.stderr
    assert proc.stdout == "rc=1\n", proc.stdout


def test_demo_creates_a_real_store_and_never_overwrites(tmp_path):
    path = tmp_path / "demo.db"
    res = run("demo", str(path))
    assert res.code == 0, res.err
    first = run("transcript", "show", "--store", str(path), "--tenant", "acme", "--session", "s-001", "--index", "0", "--speaker", "user")
    assert first.code == 0 and "What is the status of order 1042?" in first.out
    before = path.read_bytes()
    again = run("demo", str(path))
    assert again.code == 2 and "already exists" in again.err
    assert path.read_bytes() == before
