"""One run's surroundings, httpie-style: its streams, the terminal test and the root options.

``main()`` creates one ``Environment`` and hands it to the command line (click's ``obj``); the
commands pass it on to the library functions that write output or read input, so those run
without the CLI and tests pass their own streams instead of patching globals. Kept free of
typing/dataclasses imports: the quick route (``cli/fast.py``) builds one too.
"""

from __future__ import annotations

import sys


class Environment:
    def __init__(self, *, stdout=None, stderr=None, stdin=None, stdin_isatty=None) -> None:
        self.stdout = stdout if stdout is not None else sys.stdout
        self.stderr = stderr if stderr is not None else sys.stderr
        self.stdin = stdin if stdin is not None else sys.stdin
        self._stdin_isatty = stdin_isatty  # None: ask the stream
        # Set from the root options (--debug, --connect-timeout, --pg-schema, ...) for this run.
        self.debug = False
        self.connection: dict = {}

    def stdin_isatty(self) -> bool:
        """Whether an operator can type a confirmation on standard input."""
        if self._stdin_isatty is not None:
            return self._stdin_isatty
        return _isatty(self.stdin)

    def stdout_isatty(self) -> bool:
        return _isatty(self.stdout)

    def terminal_width(self, default: int = 80) -> int:
        import shutil

        return shutil.get_terminal_size((default, 24)).columns

    def stdin_bytes(self) -> bytes:
        """All of standard input, as bytes."""
        buffer = getattr(self.stdin, "buffer", None)
        if buffer is not None:
            return buffer.read()
        # A text stream without a buffer (an embedding program's replacement): its text, re-encoded.
        return self.stdin.read().encode("utf-8", "surrogatepass")


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
