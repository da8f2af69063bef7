"""Bundle writers: a directory, a .zip or a .tar.gz, written beside the target and renamed into
place when complete, so a bundle is whole or absent. Files hold personal data: 0600, dirs 0700."""

from __future__ import annotations

import io
import os
import shutil
import time

from symfonic_cli.errors import UsageError

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
    --force (exit 2), anything that is not a bundle we may replace, a missing parent directory."""
    if not path:
        raise UsageError("--output is empty")
    kind = bundle_kind(path)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise UsageError(f"--output {path}: the directory {parent} does not exist")
    if os.path.lexists(path):
        if not force:
            raise UsageError(f"--output {path} exists; a bundle is never overwritten", hint="pass --force to replace it")
        if os.path.islink(path):
            raise UsageError(f"--output {path} is a symbolic link; refusing to replace it")
        if kind == "dir":
            if not os.path.isdir(path):
                raise UsageError(f"--output {path} exists and is not a directory")
            if os.listdir(path) and not os.path.isfile(os.path.join(path, MANIFEST)):
                raise UsageError(f"--output {path} is a directory that holds no bundle (no {MANIFEST}); refusing to replace it")
        elif not os.path.isfile(path):
            raise UsageError(f"--output {path} exists and is not a regular file")
    return kind


def _partial_name(path: str) -> str:
    head, tail = os.path.split(os.path.abspath(path))
    return os.path.join(head, f".{tail}.partial-{os.getpid()}")


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
                f.write(data)
        elif self.kind == "zip":
            import zipfile

            info = zipfile.ZipInfo(name, date_time=time.gmtime(self._now)[:6])
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o100600 << 16
            self._zip.writestr(info, data)
        else:
            import tarfile

            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), int(self._now), 0o600
            self._tar.addfile(info, io.BytesIO(data))

    def add_file(self, name: str, source, size: int) -> None:
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

            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = size, int(self._now), 0o600
            self._tar.addfile(info, source)

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
                os.replace(self.partial, self.path)
            else:
                _link_into_place(self.partial, self.path)
            return
        if os.path.lexists(self.path):
            if not force:
                raise UsageError(f"--output {self.path} appeared while exporting; left as it was", hint="pass --force to replace it")
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
