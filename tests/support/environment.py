"""httpie's MockEnvironment for symfonic: one run's streams in memory, and running ``main()`` on them.

``main(argv, environment=MockEnvironment())`` runs the real command line in-process; every byte it
writes is in ``env.stdout`` / ``env.stderr`` (``env.out`` / ``env.err`` as text), and
``stdout_isatty=True`` makes stdout look like a terminal (tables, colour) without a pty.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from unittest import mock

from symfonic_cli.environment import Environment


class MemoryStream(io.StringIO):
    """A text stream in memory that may claim to be a terminal."""

    def __init__(self, isatty: bool = False) -> None:
        super().__init__()
        self._isatty = isatty

    def isatty(self) -> bool:
        return self._isatty

    @property
    def encoding(self) -> str:
        return "utf-8"


class MockEnvironment(Environment):
    def __init__(self, *, stdin: str = "", stdout_isatty: bool = False, stderr_isatty: bool = False,
                 stdin_isatty: bool = False) -> None:
        super().__init__(stdout=MemoryStream(stdout_isatty), stderr=MemoryStream(stderr_isatty),
                         stdin=io.StringIO(stdin), stdin_isatty=stdin_isatty)

    @property
    def out(self) -> str:
        return self.stdout.getvalue()

    @property
    def err(self) -> str:
        return self.stderr.getvalue()


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    env: MockEnvironment


def run_in(*args: str, env: MockEnvironment | None = None, environ: dict[str, str] | None = None) -> Outcome:
    """``symfonic ARGS`` through ``main(argv, environment)``; the process's own SYMFONIC_*
    variables (but the test servers') are left out, as tests/support/cli.run does."""
    from symfonic_cli.cli.app import main

    env = env or MockEnvironment()
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SYMFONIC_") or k.startswith(("SYMFONIC_TEST_", "SYMFONIC_REQUIRE_"))}
    clean.update(environ or {})
    code = 0
    with mock.patch.dict(os.environ, clean, clear=True):
        try:
            main(list(args), environment=env)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return Outcome(code, env.out, env.err, env)
