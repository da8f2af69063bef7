"""Bundle writers: a directory, a .zip or a .tar.gz, written beside the target and renamed into
place when complete, so a bundle is whole or absent. Files hold personal data: 0600, dirs 0700."""

from __future__ import annotations

import io
import os
import shutil
import time

from symfonic_cli.errors import FileAccessError, SymfonicError, UsageError

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO, Union

    # Where a member of a bundle is: a file path, or (how, archive path, member name).
    _Source = Union[str, tuple[str, str, str]]

MANIFEST = "manifest.json"


def bundle_kind(path: str) -> str:
    """``zip``, ``tar.gz`` or ``dir``, from how the output name ends (case-insensitive)."""
    low = path.lower()
    if low.endswith(".zip"):
        return "zip"
    if low.endswith((".tar.gz", ".tgz")):
        return "tar.gz"
    return "dir"


def check_target(path: str, force: bool) -> str:
    """The bundle kind, after refusing what must not be written: an existing bundle without
    --force (exit 2), anything that is not a bundle symfonic wrote, a missing parent directory."""
    if not path:
        raise UsageError("--output is empty")
    last = os.path.basename(path.rstrip(os.sep + (os.altsep or "")))
    if last in ("", ".", ".."):
        raise UsageError(f"--output {path} names no file or folder of its own (it ends in '{last or os.sep}')",
                         hint="e.g. --output export.zip, export.tar.gz or export-dir")
    if len(os.fsencode(last)) > NAME_MAX:
        raise UsageError(f"--output {path}: the name is {len(os.fsencode(last))} bytes, more than a file name may hold ({NAME_MAX})")
    kind = bundle_kind(path)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise UsageError(f"--output {path}: the directory {parent} does not exist")
    if os.path.lexists(path):
        if not force:
            raise UsageError(f"--output {path} exists; a bundle is never overwritten", hint="pass --force to replace it")
        check_replaceable(path, kind)
    return kind


def check_replaceable(path: str, kind: str) -> None:
    """What ``--force`` may replace: an empty directory, or a bundle whose manifest is one symfonic
    wrote and which holds nothing that manifest does not list; else UsageError, nothing touched."""
    if os.path.islink(path):
        raise UsageError(f"--output {path} is a symbolic link; refusing to replace it")
    if kind == "dir":
        if not os.path.isdir(path):
            raise UsageError(f"--output {path} exists and is not a directory")
        if not os.listdir(path):
            return
        if not os.path.isfile(os.path.join(path, MANIFEST)):
            raise UsageError(f"--output {path} is a directory that holds no bundle (no {MANIFEST}); refusing to replace it")
        members = _dir_members(path)
    elif not os.path.isfile(path):
        raise UsageError(f"--output {path} exists and is not a regular file")
    else:
        members = _archive_members(path, kind)
    problem = _foreign(members)
    if problem:
        raise UsageError(f"--output {path} is not a bundle symfonic wrote ({problem}); refusing to replace it",
                         hint="remove it yourself, or choose another --output")


def _dir_members(path: str) -> dict[str, _Source | None]:
    """relative name -> a reader of its bytes, for every entry below ``path`` ("/" ends a folder;
    anything but a regular file or folder is named as such, so it is never listed)."""
    members: dict[str, _Source | None] = {}
    for top, dirs, files in os.walk(path):
        rel = os.path.relpath(top, path).replace(os.sep, "/")
        prefix = "" if rel == "." else rel + "/"
        for name in dirs + files:
            full = os.path.join(top, name)
            if os.path.islink(full):
                members[prefix + name + " (a symbolic link)"] = None
            elif name in dirs:
                members[prefix + name + "/"] = None
            elif os.path.isfile(full):
                members[prefix + name] = full
            else:
                members[prefix + name + " (not a regular file)"] = None
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(top, d))]
    return members


def _archive_members(path: str, kind: str) -> dict[str, _Source | None]:
    members: dict[str, _Source | None] = {}
    try:
        if kind == "zip":
            import zipfile

            with zipfile.ZipFile(path) as z:
                for info in z.infolist():
                    members[info.filename] = ("zip", path, info.filename) if not info.is_dir() else None
        else:
            import tarfile

            with tarfile.open(path, "r:gz") as t:
                for m in t:
                    members[m.name if m.isfile() else m.name + " (not a regular file)"] = ("tar", path, m.name) if m.isfile() else None
    except Exception as exc:  # zipfile and tarfile raise errors of their own (and others) for a foreign file
        raise UsageError(f"--output {path} is not a bundle symfonic wrote (not a readable {kind}: {exc}); refusing to replace it") from None
    return members


def _read_member(source: _Source) -> bytes:
    if isinstance(source, str):
        with open(source, "rb") as f:
            return f.read()
    how, path, name = source
    if how == "zip":
        import zipfile

        with zipfile.ZipFile(path) as z:
            return z.read(name)
    import tarfile

    with tarfile.open(path, "r:gz") as t:
        member = t.extractfile(name)
        return member.read() if member is not None else b""


_MANIFEST_KEYS = {"tool", "tool_version", "created", "store", "selection", "threads", "not_found"}
_ENTRY_FILES = ("file", "state_file", "retained_file")


def _foreign(members: dict[str, _Source | None]) -> str | None:
    """Why these members are not a bundle symfonic wrote, or None."""
    import json

    source = members.get(MANIFEST)
    if source is None:
        return f"no {MANIFEST}"
    try:
        manifest = json.loads(_read_member(source))
    except (OSError, ValueError) as exc:
        return f"its {MANIFEST} is not JSON: {exc}"
    threads = manifest.get("threads") if isinstance(manifest, dict) else None
    if (not isinstance(manifest, dict) or manifest.get("tool", "symfonic") != "symfonic" or not set(manifest) <= _MANIFEST_KEYS
            or not isinstance(manifest.get("tool_version"), str) or not isinstance(threads, list)):
        return f"its {MANIFEST} is not a symfonic export manifest"
    listed = {MANIFEST}
    for entry in threads:
        if not isinstance(entry, dict) or not isinstance(entry.get("key"), str) or not isinstance(entry.get("file"), str):
            return f"its {MANIFEST} is not a symfonic export manifest"
        listed.update(entry[f] for f in _ENTRY_FILES if isinstance(entry.get(f), str))
    folders = {name.rsplit("/", 1)[0] + "/" for name in listed if "/" in name}
    extra = sorted(name for name in members if name not in listed and name not in folders)
    if extra:
        shown = ", ".join(extra[:3]) + (f" and {len(extra) - 3} more" if len(extra) > 3 else "")
        return f"it holds what its {MANIFEST} does not list: {shown}"
    return None


def partial_leftovers(path: str) -> list[str]:
    """The partial bundles (``.NAME.partial-PID``, and ``.old`` of a replace cut short) that an
    export to ``path`` killed before it finished left beside it; those of a running process are
    not included."""
    head, tail = os.path.split(os.path.abspath(path))
    prefix = _partial_prefix(tail)
    found = []
    try:
        names = os.listdir(head)
    except OSError:
        return []
    for name in names:
        if not name.startswith(prefix):
            continue
        pid = name[len(prefix):].removesuffix(".old")
        if not pid.isdigit() or int(pid) == os.getpid() or _running(int(pid)):
            continue
        found.append(os.path.join(head, name))
    return sorted(found)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def remove_leftover(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.unlink(path)


NAME_MAX = 255  # bytes in one file name (Linux, macOS, Windows in characters)
_PARTIAL_ROOM = len(".partial-") + 10 + len(".old")  # a pid of up to 10 digits, and a replace's .old


def _partial_prefix(tail: str) -> str:
    """``.NAME.partial-``; for a name too long to take it within NAME_MAX, its start and a digest
    of the whole name (still one prefix per output name)."""
    prefix = f".{tail}.partial-"
    if len(os.fsencode(prefix)) + _PARTIAL_ROOM - len(".partial-") <= NAME_MAX:
        return prefix
    import hashlib

    raw = os.fsencode(tail)
    digest = hashlib.sha256(raw).hexdigest()[:16]
    start = raw[:NAME_MAX - _PARTIAL_ROOM - len(digest) - 3].decode("utf-8", "ignore") if raw else ""
    return f".{start}~{digest}.partial-"


def _partial_name(path: str) -> str:
    head, tail = os.path.split(os.path.abspath(path))
    return os.path.join(head, f"{_partial_prefix(tail)}{os.getpid()}")


def output_error(path: str, exc: OSError) -> SymfonicError:
    """What an OSError writing the bundle means for the person who gave ``--output``: a name the
    system will not take is a usage error (exit 2), anything else a file that could not be written
    (a full or failing disk, a size limit, no permission: exit 4). Nothing partial is left."""
    import errno

    why = exc.strerror or str(exc)
    if exc.errno in (errno.ENAMETOOLONG, errno.EINVAL, errno.ENOTDIR, errno.EISDIR, errno.ELOOP, errno.EEXIST, errno.ENOENT):
        return UsageError(f"--output {path}: the name cannot be used ({why}); nothing was written")
    return FileAccessError(f"--output {path}: cannot be written ({why}); nothing was written")


class Bundle:
    """Add files one at a time (nothing is held beyond the file being added), then ``commit``."""

    def __init__(self, path: str, kind: str) -> None:
        self.path, self.kind = path, kind
        self.partial = _partial_name(path)
        self._now = time.time()
        if kind == "dir":
            os.mkdir(self.partial, 0o700)
            self._dirs: set[str] = set()
        else:
            fd = os.open(self.partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            self._file = os.fdopen(fd, "wb")
            if kind == "zip":
                import zipfile

                self._zip = zipfile.ZipFile(self._file, "w", compression=zipfile.ZIP_DEFLATED)
            else:
                import tarfile

                self._tar = tarfile.open(fileobj=self._file, mode="w:gz", format=tarfile.PAX_FORMAT)

    def add(self, name: str, data: bytes) -> None:
        """``name``: a relative path made of safe parts (export/names.py), '/'-separated."""
        if self.kind == "dir":
            folder = os.path.dirname(name)
            if folder and folder not in self._dirs:
                os.makedirs(os.path.join(self.partial, folder), 0o700, exist_ok=True)
                self._dirs.add(folder)
            fd = os.open(os.path.join(self.partial, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)  # data: a bundle member
        elif self.kind == "zip":
            import zipfile

            info = zipfile.ZipInfo(name, date_time=time.gmtime(self._now)[:6])
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o100600 << 16
            self._zip.writestr(info, data)
        else:
            import tarfile

            member = tarfile.TarInfo(name)
            member.size, member.mtime, member.mode = len(data), int(self._now), 0o600
            self._tar.addfile(member, io.BytesIO(data))

    def add_file(self, name: str, source: BinaryIO, size: int) -> None:
        """``name`` from an open binary file of ``size`` bytes, copied in chunks (the manifest of
        a large export is never held in memory whole)."""
        source.seek(0)
        if self.kind == "dir":
            fd = os.open(os.path.join(self.partial, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                shutil.copyfileobj(source, f)
        elif self.kind == "zip":
            import zipfile

            info = zipfile.ZipInfo(name, date_time=time.gmtime(self._now)[:6])
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o100600 << 16
            with self._zip.open(info, "w", force_zip64=size > (1 << 31)) as f:
                shutil.copyfileobj(source, f)
        else:
            import tarfile

            member = tarfile.TarInfo(name)
            member.size, member.mtime, member.mode = size, int(self._now), 0o600
            self._tar.addfile(member, source)

    def commit(self, force: bool) -> None:
        """Finish the archive, flush it to disk, and move it into place (replacing the old bundle
        only with ``force``, which check_target allowed)."""
        if self.kind == "zip":
            self._zip.close()
        elif self.kind == "tar.gz":
            self._tar.close()
        if self.kind != "dir":
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            if force:
                if os.path.lexists(self.path):
                    check_replaceable(self.path, self.kind)  # it may have changed while exporting
                os.replace(self.partial, self.path)
            else:
                _link_into_place(self.partial, self.path)
            return
        if os.path.lexists(self.path):
            if not force:
                raise UsageError(f"--output {self.path} appeared while exporting; left as it was", hint="pass --force to replace it")
            check_replaceable(self.path, self.kind)  # it may have changed while exporting
            old = self.partial + ".old"
            os.rename(self.path, old)
            os.rename(self.partial, self.path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(self.partial, self.path)

    def discard(self) -> None:
        try:
            if self.kind == "zip":
                self._zip.close()
            elif self.kind == "tar.gz":
                self._tar.close()
            if self.kind != "dir":
                self._file.close()
        except Exception:
            pass
        if self.kind == "dir":
            shutil.rmtree(self.partial, ignore_errors=True)
        else:
            try:
                os.unlink(self.partial)
            except OSError:
                pass


def _link_into_place(partial: str, path: str) -> None:
    # A hard link fails when the name exists: a bundle that appeared meanwhile is never replaced.
    try:
        os.link(partial, path)
    except FileExistsError:
        os.unlink(partial)
        raise UsageError(f"--output {path} appeared while exporting; left as it was", hint="pass --force to replace it") from None
    except OSError:
        if os.path.lexists(path):
            os.unlink(partial)
            raise UsageError(f"--output {path} appeared while exporting; left as it was") from None
        os.rename(partial, path)
        return
    os.unlink(partial)
