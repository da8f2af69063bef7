"""Which releases wrote a store's checkpoints, and which threads each finding is in.

Pure: no I/O. Fed group by group (compat/report.py's store_report), a thread's groups one after
another, so threads are counted without holding a set of them; only the first ``FIRST_THREADS``
keys of each finding are kept, in byte order (Python's code point order is UTF-8's byte order).
"""

from __future__ import annotations

from bisect import insort
from collections import Counter
from collections.abc import Mapping
from typing import Any

FIRST_THREADS = 10
NO_RELEASE_TEXT = "(none)"  # the text form of a checkpoint without a package_version (null in JSON)


def release_of(envelope: Any) -> str | None:
    """The package_version of an envelope value, as decode_envelope reads it: a string, else None."""
    if isinstance(envelope, Mapping):
        value = envelope.get("package_version")
        return value if isinstance(value, str) else None
    return None


def release_text(release: str | None) -> str:
    return NO_RELEASE_TEXT if release is None else release


def _release_order(release: str | None) -> tuple[bool, str]:
    return (release is None, release or "")  # by string, the checkpoints without one last


class ThreadList:
    """How many threads, and the first FIRST_THREADS of them in byte order."""

    __slots__ = ("threads", "first")

    def __init__(self) -> None:
        self.threads = 0
        self.first: list[str] = []

    def add(self, key: str) -> None:
        self.threads += 1
        if len(self.first) < FIRST_THREADS or key < self.first[-1]:
            insort(self.first, key)
            del self.first[FIRST_THREADS:]

    def to_json(self) -> dict[str, Any]:
        return {"threads": self.threads, "first_threads": list(self.first)}


class ReleaseTally:
    """Checkpoints and threads per release, and per finding (a label: ("newer", None) for the
    finding, ("newer", 2) for one of its rows) its threads and the releases that wrote it."""

    def __init__(self) -> None:
        self.checkpoints: Counter = Counter()  # release -> checkpoints
        self.threads: Counter = Counter()  # release -> threads
        self.labels: dict[tuple, ThreadList] = {}
        self.label_releases: dict[tuple, Counter] = {}  # label -> release -> checkpoints
        self._thread: str | None = None
        self._seen_releases: set = set()
        self._seen_labels: set = set()

    def add(self, thread: str | None, release: str | None, checkpoints: int, labels: tuple[tuple, ...]) -> None:
        """``thread`` None: checkpoints of no known thread (a key that is not a string), or a group
        carrying latest counts only (no checkpoints)."""
        if not checkpoints:
            return
        self.add_checkpoints(release, checkpoints, labels)
        if thread is not None:
            self.add_thread(thread, release, labels)

    def add_checkpoints(self, release: str | None, checkpoints: int, labels: tuple[tuple, ...]) -> None:
        """Checkpoints counted by release and label: a sum, in any order (threads apart: add_thread)."""
        if not checkpoints:
            return
        self.checkpoints[release] += checkpoints
        for label in labels:
            found = self.label_releases.get(label)
            if found is None:
                found = self.label_releases[label] = Counter()
            found[release] += checkpoints

    def add_thread(self, thread: str, release: str | None, labels: tuple[tuple, ...]) -> None:
        """A group of checkpoints of ``thread`` (a thread's groups one after another)."""
        if thread != self._thread:
            self._flush()
            self._thread = thread
        self._seen_releases.add(release)
        self._seen_labels.update(labels)

    def _flush(self) -> None:
        if self._thread is None:
            return
        threads = self.threads
        for release in self._seen_releases:
            threads[release] += 1
        for label in self._seen_labels:
            found = self.labels.get(label)
            if found is None:
                found = self.labels[label] = ThreadList()
            found.add(self._thread)
        self._thread = None
        self._seen_releases.clear()
        self._seen_labels.clear()

    def done(self) -> None:
        self._flush()

    # -- JSON

    def releases_json(self) -> list[dict[str, Any]]:
        return [
            {"package_version": r, "checkpoints": self.checkpoints[r], "threads": self.threads.get(r, 0)}
            for r in sorted(self.checkpoints, key=_release_order)
        ]

    def label_json(self, label: tuple) -> dict[str, Any]:
        """The threads of a finding (or of one of its rows) and the releases that wrote it."""
        found = self.labels.get(label) or ThreadList()
        return {**found.to_json(), "package_versions": counts_json(self.label_releases.get(label) or Counter())}


def counts_json(releases: Counter) -> list[dict[str, Any]]:
    """One thread's checkpoints per release."""
    return [{"package_version": r, "checkpoints": releases[r]} for r in sorted(releases, key=_release_order)]


# -- text (unescaped: the renderer escapes)


def releases_text(package_versions: list[dict[str, Any]]) -> str:
    return ", ".join(f"{release_text(p['package_version'])} ({p['checkpoints']})" for p in package_versions) or "-"


def threads_text(found: dict[str, Any]) -> str:
    """``12 threads: a, b, ... (the first 10; --by-thread lists every one)``."""
    n, first = found["threads"], found["first_threads"]
    text = f"{n} thread{'' if n == 1 else 's'}"
    if first:
        text += ": " + ", ".join(first)
    if n > len(first):
        text += f", ... (the first {len(first)}; --by-thread lists every one)"
    return text
