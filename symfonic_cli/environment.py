"""One run's surroundings, httpie-style: its streams, the terminal test and the root options.

``main()`` creates one ``Environment`` (or takes the caller's) and hands it to the command line
(click's ``obj``); the commands pass it on, as an argument, to every function that writes output
or reads input: nothing below ``cli/app.py`` reads ``sys.stdout``/``sys.stderr``, so tests and
embedding programs pass their own streams instead of patching globals. Kept free of
typing/dataclasses imports: the quick route (``cli/fast.py``) builds one too.
"""

from __future__ import annotations

import sys

from symfonic_cli.vocabulary import COLOR_MODES  # noqa: F401 - --color (vocabulary.py)

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TextIO


class Environment:
    def __init__(self, *, stdout: TextIO | None = None, stderr: TextIO | None = None, stdin: TextIO | None = None,
                 stdin_isatty: bool | None = None) -> None:
        self.stdout = stdout if stdout is not None else sys.stdout
        self.stderr = stderr if stderr is not None else sys.stderr
        self.stdin = stdin if stdin is not None else sys.stdin
        self._stdin_isatty = stdin_isatty  # None: ask the stream
        # Set from the root options (--debug, --connect-timeout, --pg-schema, ...) for this run.
        self.debug = False
        self.connection: dict = {}
        # --color auto|always|never; NO_COLOR (any value) beats auto and always (color_wanted).
        self.color = "auto"
        # --no-pager: never page this run's output (symfonic_cli/pager.py).
        self.pager = True
        # --tz: the zone times are shown in (table and text) and naive time input is read in.
        # None is UTC; JSON and JSONL always say UTC with Z.
        self.tz: str | None = None
        # --absolute-time: tables show the ISO instants, not their ages (kubectl's AGE: 45s, 3h, 12d).
        self.absolute_time = False
        self._zone = None
        # A program's progress callback, ``(verb, done, total)`` after each thread of an erase,
        # sweep, prune, export or migrate; the progress line on a terminal is drawn regardless.
        self.on_progress: Callable[[str, int, int], None] | None = None

    @classmethod
    def library(cls) -> Environment:
        """A run inside a program (the Python API): nothing printed, no terminal asked, standard
        input empty (a changing run's events go to the API's Report: api/report.py)."""
        from typing import cast

        quiet = cast("TextIO", _Discard())
        env = cls(stdout=quiet, stderr=quiet, stdin=quiet, stdin_isatty=False)
        return env

    def set_tz(self, name: str | None) -> None:
        """``--tz``; a ValueError names an unknown zone."""
        from symfonic_cli.clock import zone

        self._zone = zone(name)  # checked first: a bad name leaves the run's zone as it was
        self.tz = name

    def zone(self):
        """The tzinfo of --tz (UTC when not given)."""
        if self._zone is None:
            from datetime import timezone

            return timezone.utc
        return self._zone

    def shows_utc(self) -> bool:
        from datetime import timedelta

        z = self._zone
        return z is None or (getattr(z, "key", None) is None and z.utcoffset(None) == timedelta(0))

    def color_wanted(self) -> bool | None:
        """False: no escape sequence at all; True: styles even off a terminal; None: rich decides
        (a terminal that is not ``TERM=dumb``)."""
        import os

        if "NO_COLOR" in os.environ or self.color == "never":
            return False
        if self.color == "always":
            return True
        return None

    def stdin_isatty(self) -> bool:
        """Whether an operator can type a confirmation on standard input."""
        if self._stdin_isatty is not None:
            return self._stdin_isatty
        return _isatty(self.stdin)

    def stdout_isatty(self) -> bool:
        return _isatty(self.stdout)

    def stdin_bytes(self) -> bytes:
        """All of standard input, as bytes."""
        buffer = getattr(self.stdin, "buffer", None)
        if buffer is not None:
            return buffer.read()
        # A text stream without a buffer (an embedding program's replacement): its text, re-encoded.
        return self.stdin.read().encode("utf-8", "surrogatepass")


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class _Discard:
    """A text stream that takes every write and reads as empty (no terminal behind it)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def read(self, size: int = -1) -> str:
        return ""

    def readline(self, size: int = -1) -> str:
        return ""

    def isatty(self) -> bool:
        return False
