"""Running the real ``symfonic`` command in-process (fast) or as a subprocess (exact)."""

from __future__ import annotations

import ast
import io
import os
import subprocess
import sys
from dataclasses import dataclass
from unittest import mock


@dataclass
class Result:
    code: int
    out: str
    err: str


def run(*args: str, env: dict[str, str] | None = None, input: str | None = None) -> Result:
    """Invoke ``symfonic ARGS`` through its real entry point with an Environment of in-memory
    streams (nothing redirected: every byte must go through it), capturing output and exit code."""
    from symfonic_cli.cli.app import main
    from symfonic_cli.environment import Environment

    out, err = io.StringIO(), io.StringIO()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SYMFONIC_") or k.startswith("SYMFONIC_TEST_") or k.startswith("SYMFONIC_REQUIRE_")}
    environ.update(env or {})
    stdin = io.StringIO(input if input is not None else "")
    code = 0
    with mock.patch.dict(os.environ, environ, clear=True):
        try:
            main(list(args), environment=Environment(stdout=out, stderr=err, stdin=stdin))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return Result(code, out.getvalue(), err.getvalue())


def run_process(*args: str, env: dict[str, str] | None = None, input: str | None = None, timeout: float = 120) -> Result:
    """Invoke ``python -m symfonic_cli ARGS`` as a separate process."""
    from tests.support.markers import require

    require("slow")
    environ = dict(os.environ)
    environ.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "symfonic_cli", *args],
        capture_output=True,
        text=True,
        env=environ,
        input=input,
        timeout=timeout,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def wait_for_receipt_record(proc: subprocess.Popen, receipt: os.PathLike | str, record: str = "thread", timeout: float = 60) -> None:
    """Until the receipt file of ``proc`` (a changing command started with ``--receipt``) holds a
    ``record`` line: the run is past its plan and inside its first thread. AssertionError if the
    process ends first or nothing comes in ``timeout`` seconds."""
    import time
    from pathlib import Path

    path = Path(receipt)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and f'"record": "{record}"' in path.read_text():
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError(f"{proc.args!r} never recorded a {record}")


def imports_of(argv: list[str], watched: tuple[str, ...]) -> tuple[str, list[str], object]:
    """``main(argv)`` in a fresh interpreter: what it printed, which of the ``watched`` modules
    it had imported by its end, and its exit code."""
    code = (
        "import sys\nfrom symfonic_cli.cli.app import main\n"
        f"try:\n    main({list(argv)!r})\nexcept SystemExit as e:\n    code = e.code\n"
        f"print('LOADED', sorted(m for m in {tuple(watched)!r} if m in sys.modules), repr(code))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    printed, _, tail = out.rpartition("LOADED ")
    loaded, _, exit_code = tail.strip().partition("] ")
    return printed, ast.literal_eval(loaded + "]"), ast.literal_eval(exit_code)
