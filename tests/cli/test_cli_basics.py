"""The command itself: help without heavy imports, version, completions, exit codes, colour."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from symfonic_cli import __version__
from tests.support.cli import run, run_process

ROOT = Path(__file__).resolve().parents[2]
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
    # the first line names symfonic; the LangGraph packages follow (tests/project/test_docs.py)
    assert res.code == 0 and res.out.splitlines()[0] == f"symfonic {__version__}"


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
    the same exit code, 141 (128 + SIGPIPE, as git), on every route (click's 1 is not kept)."""
    cmd = f"{sys.executable} -m symfonic_cli {args} --store {sqlite_master}"
    proc = subprocess.run(["bash", "-c", f"{cmd} | true; echo rc=${{PIPESTATUS[0]}}"], capture_output=True, text=True, timeout=60)
    assert proc.stderr == "", proc.stderr
    assert proc.stdout == "rc=141\n", proc.stdout


def test_demo_creates_a_real_store_and_never_overwrites(tmp_path):
    path = tmp_path / "demo.db"
    res = run("demo", str(path))
    assert res.code == 0, res.err
    first = run("transcript", "show", "--store", str(path), "--tenant", "acme", "--session", "s-001", "--index", "0", "--speaker", "user")
    assert first.code == 0 and "What is the status of order 1042?" in first.out
    before = path.read_bytes()
    # README's first command run twice: the demo store is kept as it is, exit 0.
    again = run("demo", str(path))
    assert again.code == 0 and "demo store already" in again.out, again.err
    assert path.read_bytes() == before
    # Any other file is never overwritten.
    other = tmp_path / "other.db"
    other.write_bytes(b"not a demo")
    refused = run("demo", str(other))
    assert refused.code == 2 and "already exists" in refused.err and other.read_bytes() == b"not a demo"


def test_demo_store_shows_every_feature(tmp_path):
    """Tool calls, an approval interrupt, a failed node, two tenants with sub-tenants, threads aged
    40, 100 and 400 days, checkpoints from a legacy and a migrated release."""
    import json

    path = str(tmp_path / "demo.db")
    assert run("demo", path).code == 0
    rows = json.loads(run("threads", "list", "-s", path, "--status", "interrupted,error,done,pending", "-f", "json").out)
    status = {r["key"]: r["status"] for r in rows}
    assert status["acme:eu:s-003"] == "interrupted" and status["globex:apac:s-102"] == "error"
    assert {(r["tenant"], r["sub_tenant"]) for r in rows} >= {("acme", None), ("acme", "eu"), ("globex", None), ("globex", "apac")}

    def idle(d: str) -> set[str]:
        return {r["key"] for r in json.loads(run("threads", "list", "-s", path, "--inactive-for", d, "-f", "json").out)}

    assert idle("30d") == {"acme:eu:s-040", "globex:apac:s-101", "acme:_:s-400"}
    assert idle("90d") == {"globex:apac:s-101", "acme:_:s-400"} and idle("365d") == {"acme:_:s-400"}
    tools = json.loads(run("transcript", "show", "-s", path, "-t", "acme:_:s-001", "--tools", "-f", "json").out)
    assert any(r["role"] == "tool" for r in tools)
    report = json.loads(run("compat", "report", "-s", path, "-f", "json").out)
    lines = {(b["writer_line"], b["format_version"]): b["checkpoints"] for b in report["by_writer_line"]}
    assert lines[("legacy", 0)] > 0 and lines[("migrated", 1)] > 0
    assert report["latest_checkpoint_of_threads"]["legacy"] > 0 and report["latest_checkpoint_of_threads"]["migrated"] > 0
