"""The ``--receipt FILE`` audit file of ``thread erase``: JSONL that cannot be redirected or lost.

Opened with ``O_NOFOLLOW`` (a symbolic link at the path is refused: it could send the record
elsewhere) and ``O_APPEND``, created mode 0600, only a regular file. Each line is written with one
``write`` and ``fsync``'d before the next thread is erased, so the file never lacks an erasure
that happened. Line format (each line a self-contained JSON object, ``record`` says which):

- ``start``: before anything is deleted (a full disk stops the run here, nothing erased);
- ``thread``: one per thread, right after its commit and verification (or its failure, or its
  not-found), with the run's receipt id, store, operator, ticket and selection;
- ``end``: the summary and notes of the run.
"""

from __future__ import annotations

import errno
import json
import os

from symfonic_cli.errors import ReceiptError, UsageError

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from symfonic_cli.location import StoreLocation


class ReceiptWriteError(Exception):
    """A line could not be appended (full disk, I/O error)."""


class ReceiptFile:
    def __init__(self, path: str, *, writable: bool, store: StoreLocation | None = None) -> None:
        """Opened, and checked, before anything is changed; never ``store``'s own file or one its
        engine keeps beside it."""
        self.path = path
        self.fd: int | None = None
        self._needs_newline = False
        from symfonic_cli.output_paths import NotRegularFile, open_regular

        try:
            if writable:
                self.fd = open_regular(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, store=store, option="--receipt")
            else:
                # A dry run opens it only to read, and checks what the real run's open would meet.
                try:
                    self.fd = open_regular(path, os.O_RDONLY, store=store, option="--receipt")
                except FileNotFoundError:
                    parent = os.path.dirname(os.path.abspath(path))
                    if not os.path.isdir(parent):
                        raise FileNotFoundError(errno.ENOENT, f"the directory {parent} does not exist") from None
                    if not os.access(parent, os.W_OK | os.X_OK):
                        raise PermissionError(errno.EACCES, f"the directory {parent} is not writable") from None
                    return
            info = os.fstat(self.fd)
            if not writable and not os.access(path, os.W_OK):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        except NotRegularFile:
            self.close()
            raise UsageError(f"receipt file {path} is not a regular file") from None
        except OSError as exc:
            self.close()
            if exc.errno == errno.ELOOP:
                raise UsageError(f"receipt file {path} is a symbolic link: refused (give the real path)") from None
            if exc.errno == errno.ENOENT and writable:
                exc.strerror = f"the directory {os.path.dirname(os.path.abspath(path))} does not exist"
            raise ReceiptError(f"cannot append to receipt file {path}: {exc.strerror}; nothing erased") from None
        if info.st_size:
            # A line cut short (a crash mid-write) must not swallow the next one.
            self._needs_newline = os.pread(self.fd, 1, info.st_size - 1) != b"\n"

    def previous_erasures(self, identity: dict, keys: Iterable[str]) -> dict[str, tuple[str, str]]:
        """key -> (receipt_id, time) of the latest ``erased`` record of each of ``keys`` in the
        file whose store identity is ``identity`` exactly (records without one never match).
        Read a line at a time: memory does not grow with the file, only with its longest line."""
        if self.fd is None:
            return {}
        wanted = set(keys)
        if not wanted:
            return {}
        found: dict[str, tuple[str, str]] = {}
        # A few keys: most lines can be passed over without parsing them.
        needles = _needles(wanted) if len(wanted) <= 8 else None
        for raw in self._lines():
            if b"erased" not in raw or (needles is not None and not any(n in raw for n in needles)):
                continue
            try:
                rec = json.loads(raw)
            except ValueError:
                continue  # a line cut short, or not ours
            if not isinstance(rec, dict) or rec.get("store_identity") != identity:
                continue
            if rec.get("record") == "thread":
                entries = [rec]
            else:  # one whole receipt per line, as written before the per-thread lines
                listed = rec.get("threads")
                entries = listed if isinstance(listed, list) else []
            for t in entries:
                if isinstance(t, dict) and t.get("status") == "erased" and t.get("key") in wanted and isinstance(t["key"], str):
                    found[t["key"]] = (str(rec.get("receipt_id")), str(t.get("time") or rec.get("time")))
        return found

    def _lines(self):
        """The file's lines (without their newline), read in chunks of 1 MiB."""
        if self.fd is None:  # a dry run's receipt file that does not exist yet: no lines
            return
        offset, rest = 0, b""
        while True:
            chunk = os.pread(self.fd, 1 << 20, offset)
            if not chunk:
                break
            offset += len(chunk)
            parts = (rest + chunk).split(b"\n")
            rest = parts.pop()
            yield from parts
        if rest:
            yield rest

    def append(self, record: dict) -> None:
        """One line, written and on disk before this returns; ReceiptWriteError otherwise."""
        from symfonic_cli.render import json_dumps

        assert self.fd is not None
        data = (("\n" if self._needs_newline else "") + json_dumps(record) + "\n").encode("utf-8")
        try:
            written = os.write(self.fd, data)  # data: a receipt line
            if written != len(data):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            os.fsync(self.fd)
        except OSError as exc:
            # What part of the line did reach the file is ended, so the next line stands alone.
            self._needs_newline = True
            raise ReceiptWriteError(f"cannot write receipt file {self.path}: {exc.strerror or exc}") from None
        self._needs_newline = False

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _needles(keys: Iterable[str]) -> list[bytes]:
    """Each key as a JSON string could spell it in a line (escaped to ASCII or not)."""
    from symfonic_cli.render import json_dumps

    out = set()
    for key in keys:
        for text in (json.dumps(key), json.dumps(key, ensure_ascii=False), json_dumps(key)):
            try:
                out.add(text.encode("utf-8"))
            except UnicodeEncodeError:  # a lone surrogate: escaped, so the ASCII form finds it
                pass
    return sorted(out)
