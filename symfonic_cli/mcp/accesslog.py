"""The MCP access log: one JSON line per tool call (time, tool, arguments, the thread keys
returned, row counts, outcome), never message content; a file only its owner reads (0600),
each line flushed to disk before the answer leaves."""

from __future__ import annotations

import os
import stat
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from symfonic_cli.errors import FileAccessError
from symfonic_cli.output_paths import NotRegularFile, open_regular

ENV_STATE_HOME = "XDG_STATE_HOME"
FILE_NAME = "mcp-access.jsonl"


def default_path() -> Path:
    """``$XDG_STATE_HOME/symfonic/mcp-access.jsonl`` (``~/.local/state`` when unset)."""
    base = os.environ.get(ENV_STATE_HOME) or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "symfonic" / FILE_NAME


class AccessLogFailed(Exception):
    """A record could not be written (a full disk, a file-size limit, an I/O error): the call it
    records gets no answer; the server says so on stderr, one line."""


class AccessLog:
    """Opened once when the server starts (a path it cannot write stops the start, exit 4)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        try:
            if not path.parent.exists():
                path.parent.mkdir(mode=0o700, parents=True)
            # No symlink followed, no FIFO waited on, created 0600; an existing file is narrowed to 0600 too.
            fd = open_regular(str(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        except NotRegularFile:
            raise FileAccessError(f"the access log {path} is not a regular file") from None
        except OSError as exc:
            raise FileAccessError(f"cannot open the access log {path}: {exc.strerror or exc}") from None
        info = os.fstat(fd)
        if stat.S_IMODE(info.st_mode) != 0o600:
            os.fchmod(fd, 0o600)
        self._fd = fd

    def write(self, tool: str, arguments: dict[str, Any], *, keys: list[str], rows: int, truncated: bool,
              outcome: str) -> None:
        from symfonic_cli.clock import iso_utc
        from symfonic_cli.render.escape import json_dumps

        record = {
            "time": iso_utc(datetime.now(timezone.utc)),
            "tool": tool,
            "arguments": arguments,
            "keys": keys,
            "rows": rows,
            "truncated": truncated,
            "outcome": outcome,
        }
        line = (json_dumps(record) + "\n").encode("utf-8", "surrogatepass")
        with self._lock:
            start = os.fstat(self._fd).st_size
            try:
                written = os.write(self._fd, line)
                if written != len(line):  # the rest will not fit either (a full disk, a size limit)
                    raise OSError(0, "only part of the record was written")
                os.fsync(self._fd)
            except OSError as exc:
                try:
                    os.ftruncate(self._fd, start)  # no half line: the next record starts on a line of its own
                except OSError:
                    pass
                raise AccessLogFailed(f"the access log {self.path} cannot be written ({exc.strerror or exc})") from None

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
