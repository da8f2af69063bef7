"""Turning what a store returns (envelope shapes, envelope rows) into findings and verdicts.

Pure: no I/O. Every verdict comes from envelope.decode_envelope / describe_compatibility applied
to a representative of each group, so the store-wide report and a per-checkpoint look agree.
"""

from __future__ import annotations

from symfonic_cli.clock import iso_utc

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import groupby
from typing import Any

from symfonic_cli.compat.envelope import (
    UNREADABLE,
    CheckpointFormatError,
    CompatibilityReport,
    StateEnvelope,
    boolean_anomalies,
    decode_envelope,
    describe_compatibility,
)
from symfonic_cli.compat.releases import ReleaseTally, counts_json, release_of
from symfonic_cli.model.envelope import ABSENT, EnvelopeRow, EnvelopeShape
from symfonic_cli.clock import checkpoint_id_time
from symfonic_cli.vocabulary import FINDINGS  # noqa: F401 - --fail-on's words, worded once

STATUSES = ("legacy", "migrated", "corrupt", "newer")
THREAD_FINDINGS = ("corrupt", "newer", "interrupted", "legacy")  # the findings named by thread
IN_FLIGHT = "in flight"
INTERRUPTED = "interrupted by a crash"

_KIND_SAMPLE: dict[str, Any] = {"null": None, "boolean": False, "integer": 0, "number": 0.0, "string": "", "array": []}


@dataclass(frozen=True)
class Classified:
    status: str  # one of STATUSES
    envelope: StateEnvelope | None  # None when it does not decode
    report: CompatibilityReport
    error: str | None
    anomalies: tuple[str, ...]


def classify(
    metadata: dict[str, Any],
    *,
    key: str,
    current_format: int,
    found: tuple[str, ...] = (),
    error: str | None = None,
) -> Classified:
    """``found``: anomalies the backend met decoding the row; ``error``: metadata the saver
    cannot decode at all, which no reader can resume from (corrupt, unreadable both ways)."""
    if error is not None:
        report = CompatibilityReport(UNREADABLE, None, None, False, False, error)
        return Classified("corrupt", None, report, error, found)
    report = describe_compatibility(metadata, key=key, current_format=current_format)
    anomalies = found + tuple(boolean_anomalies(metadata, key=key))
    try:
        env = decode_envelope(metadata, key=key, current_format=current_format)
    except CheckpointFormatError as exc:
        return Classified("newer" if exc.newer else "corrupt", None, report, exc.message, anomalies)
    return Classified(env.writer_line, env, report, None, anomalies)


def shape_metadata(shape: EnvelopeShape, key: str) -> dict[str, Any]:
    """A metadata mapping that decodes exactly as every checkpoint of the group does."""
    if shape.kind == "absent":
        return {}
    if shape.kind != "object":
        return {key: _KIND_SAMPLE.get(shape.kind)}
    env = {
        f: getattr(shape, f)
        for f in ("format_version", "writer_line", "safe_boundary", "finalized", "boundary_sequence")
        if getattr(shape, f) is not ABSENT
    }
    return {key: env}


# -- store-wide


@dataclass
class StoreReport:
    envelope_key: str
    current_format: int
    checkpoints: int = 0
    threads: int = 0  # threads with a root-namespace checkpoint
    by_line: Counter = field(default_factory=Counter)  # (writer_line, format_version) -> checkpoints
    corrupt: Counter = field(default_factory=Counter)  # reason -> checkpoints
    newer: Counter = field(default_factory=Counter)  # format_version -> checkpoints
    latest: Counter = field(default_factory=Counter)  # status -> threads
    anomalies: Counter = field(default_factory=Counter)  # message -> checkpoints
    in_flight: int = 0
    interrupted: int = 0
    unreadable_by_migrated: int = 0
    unreadable_by_legacy: int = 0
    suggestion: tuple[str, int] | None = None  # (other key, checkpoints)
    encryption: Any = None  # an EncryptionCensus, set only for an encrypted store (model/encryption.py)
    releases: ReleaseTally = field(default_factory=ReleaseTally)  # package_version, threads per finding

    @property
    def enveloped(self) -> int:
        return self.checkpoints - self.by_line.get(("legacy", 0), 0)

    def findings(self) -> dict[str, int]:
        return {
            "corrupt": sum(self.corrupt.values()),
            "newer": sum(self.newer.values()),
            "interrupted": self.interrupted,
            "legacy": sum(n for (line, _), n in self.by_line.items() if line == "legacy"),
            **({"plaintext": self.encryption.plaintext} if self.encryption is not None else {}),
        }

    def finding_threads(self) -> dict[str, Any]:
        """Per finding (and per row of corrupt and newer): how many threads hold it, the first of
        them in byte order, and the releases that wrote those checkpoints."""
        out = {f: self.releases.label_json((f, None)) for f in THREAD_FINDINGS}
        out["corrupt"]["by_reason"] = [{"reason": r, "checkpoints": n, **self.releases.label_json(("corrupt", r))}
                                       for r, n in sorted(self.corrupt.items())]
        out["newer"]["by_format_version"] = [{"format_version": v, "checkpoints": n, **self.releases.label_json(("newer", v))}
                                             for v, n in sorted(self.newer.items())]
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            **({"encryption": {"encrypted_values": self.encryption.encrypted, "plaintext_values": self.encryption.plaintext,
                               "first_plaintext_checkpoints": list(self.encryption.first_plain)}}
               if self.encryption is not None else {}),
            "envelope_key": self.envelope_key,
            "current_format": self.current_format,
            "checkpoints": self.checkpoints,
            "threads": self.threads,
            "by_writer_line": [
                {"writer_line": line, "format_version": v, "checkpoints": n}
                for (line, v), n in sorted(self.by_line.items())
            ],
            "corrupt": [{"reason": r, "checkpoints": n} for r, n in sorted(self.corrupt.items())],
            "newer": [{"format_version": v, "checkpoints": n} for v, n in sorted(self.newer.items())],
            # The release that wrote each checkpoint (its envelope's package_version; null: none).
            "package_versions": self.releases.releases_json(),
            "finding_threads": self.finding_threads(),
            "latest_checkpoint_of_threads": {s: self.latest.get(s, 0) for s in STATUSES},
            "anomalies": [{"anomaly": a, "checkpoints": n} for a, n in sorted(self.anomalies.items())],
            "unfinalized": {"in_flight": self.in_flight, "interrupted": self.interrupted},
            "verdict": {
                "migrated_can_read_all": self.unreadable_by_migrated == 0,
                "legacy_can_read_all": self.unreadable_by_legacy == 0,
            },
            "findings": self.findings(),
            "suggestion": None
            if self.suggestion is None
            else {"envelope_key": self.suggestion[0], "checkpoints": self.suggestion[1],
                  "flag": f"--envelope-key {self.suggestion[0]}"},
        }


def store_report(shapes: Iterable[EnvelopeShape], *, key: str, current_format: int) -> StoreReport:
    rep = StoreReport(key, current_format)
    tally = rep.releases
    known: dict[tuple, Classified] = {}  # one verdict per shape: groups come per thread now
    # Every count but the threads' is a sum over shapes: summed per (verdict, older, release)
    # here and added to the report once each at the end; a shape costs a few operations (a
    # million threads are a million shapes). The verdict is held by the group, so its id stays its own.
    groups: dict[tuple, list] = {}
    last: EnvelopeShape | None = None
    last_c: Classified | None = None
    for shape in shapes:
        if shape.metadata is None and shape.error is None and not shape.anomalies:
            if last is not None and _same_fields(shape, last):
                c = last_c
            else:
                skey = _shape_key(shape)
                c = known.get(skey)
                if c is None:
                    c = known[skey] = classify(shape_metadata(shape, key), key=key, current_format=current_format)
                last, last_c = shape, c
            release = shape.package_version
        else:
            metadata = shape.metadata if shape.metadata is not None else shape_metadata(shape, key)
            c = classify(metadata, key=key, current_format=current_format, found=shape.anomalies, error=shape.error)
            release = release_of(metadata.get(key)) if shape.metadata is not None else shape.package_version
        assert c is not None
        older = bool(shape.older)
        gkey = (id(c), older, release)
        group = groups.get(gkey)
        if group is None:
            group = groups[gkey] = [c, older, release, _labels(c, older), 0, 0]
        n = shape.checkpoints
        group[4] += n
        group[5] += shape.latest
        if n and shape.thread_id is not None:
            tally.add_thread(shape.thread_id, release, group[3])
    tally.done()
    for c, older, release, labels, n, latest in groups.values():
        _add_group(rep, c, older, release, labels, n, latest)
    return rep


def _same_fields(a: EnvelopeShape, b: EnvelopeShape) -> bool:
    """The fields that decide a verdict are the very same objects (a backend's repeated group)."""
    return (a.kind is b.kind and a.older is b.older and a.format_version is b.format_version and a.writer_line is b.writer_line
            and a.safe_boundary is b.safe_boundary and a.finalized is b.finalized and a.boundary_sequence is b.boundary_sequence)


def _labels(c: Classified, older: bool) -> tuple[tuple, ...]:
    """The findings (finding_threads' labels) a group's checkpoints are counted under."""
    if c.envelope is not None:
        return ((("legacy", None),) if c.envelope.writer_line == "legacy" else ()) + (
            (("interrupted", None),) if c.envelope.finalized is False and older else ())
    if c.status == "newer":
        return (("newer", None), ("newer", c.report.format_version))
    return (("corrupt", None), ("corrupt", c.error))


def _add_group(rep: StoreReport, c: Classified, older: bool, release: str | None, labels: tuple, n: int, latest: int) -> None:
    """A group's checkpoints (``n``) and latest checkpoints of threads, added to the report."""
    rep.checkpoints += n
    rep.threads += latest
    rep.latest[c.status] += latest
    if c.envelope is not None:
        rep.by_line[(c.envelope.writer_line, c.envelope.format_version)] += n
        if c.envelope.finalized is False:
            if older:
                rep.interrupted += n
            else:
                rep.in_flight += n
    elif c.status == "newer":
        rep.newer[c.report.format_version] += n
    else:
        rep.corrupt[c.error] += n
    for a in c.anomalies:
        rep.anomalies[a] += n
    if not c.report.readable_by_migrated:
        rep.unreadable_by_migrated += n
    if not c.report.readable_by_legacy:
        rep.unreadable_by_legacy += n
    rep.releases.add_checkpoints(release, n, labels)


def _shape_key(shape: EnvelopeShape) -> tuple:
    """What decides a shape's verdict, hashable; types kept apart (True, 1 and 1.0 hash alike)."""
    parts: list[Any] = [shape.kind, shape.older]
    for f in ("format_version", "writer_line", "safe_boundary", "finalized", "boundary_sequence"):
        v = getattr(shape, f)
        parts.append((type(v).__name__,) if isinstance(v, (list, dict)) else (type(v).__name__, v))
    return tuple(parts)


def wants_key_suggestion(rep: StoreReport) -> bool:
    """No checkpoint has anything under the key: perhaps the writers use another one."""
    return rep.checkpoints > 0 and rep.enveloped == 0 and not rep.corrupt and not rep.newer


# -- one thread


@dataclass
class CheckpointVerdict:
    row: EnvelopeRow
    c: Classified
    stored_ts: datetime | None = None  # the checkpoint's own ts, read for an id without a UUIDv6 time

    @property
    def ts(self) -> datetime | None:
        """When it was written (clock.py): the time in its id, else its own ``ts``."""
        return checkpoint_id_time(self.row.checkpoint_id) or self.stored_ts

    def to_json(self, *, full: bool = False) -> dict[str, Any]:
        ts = self.ts
        env = self.c.envelope
        out = {
            "checkpoint_id": self.row.checkpoint_id,
            "checkpoint_ns": self.row.checkpoint_ns,
            "step": self.row.step,
            "source": self.row.source,
            "ts": iso_utc(ts),
            "status": self.c.status,
            "writer_line": self.c.report.writer_line,
            "format_version": self.c.report.format_version,
            "safe_boundary": env.safe_boundary if env else None,
            "finalized": env.finalized if env else None,
            "readable_by_legacy": self.c.report.readable_by_legacy,
            "readable_by_migrated": self.c.report.readable_by_migrated,
            "reason": self.c.report.reason,
            "anomalies": list(self.c.anomalies),
            # What an operator should look at: the decoding error, else the anomalies.
            "note": self.c.error or ("; ".join(self.c.anomalies) or None),
        }
        if full:
            out["direction"] = self.c.report.direction
            out["envelope"] = env.to_metadata() if env else None
            out["raw_envelope"] = None if self.row.envelope is ABSENT else self.row.envelope
        return out


@dataclass
class ThreadReport:
    key: str
    checkpoints: int = 0
    latest: CheckpointVerdict | None = None
    boundary: CheckpointVerdict | None = None  # latest root-namespace safe boundary
    boundaries: int = 0
    unfinalized: list[tuple[CheckpointVerdict, str]] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    anomalies: list[tuple[str, str]] = field(default_factory=list)  # (checkpoint_id, message)
    corrupt: list[tuple[str, str]] = field(default_factory=list)  # (checkpoint_id, reason)
    releases: Counter = field(default_factory=Counter)  # package_version (None: none) -> checkpoints

    def findings(self) -> dict[str, int]:
        return {
            "corrupt": self.statuses.get("corrupt", 0),
            "newer": self.statuses.get("newer", 0),
            "interrupted": sum(1 for _, state in self.unfinalized if state == INTERRUPTED),
            "legacy": self.statuses.get("legacy", 0),
        }

    def to_json(self) -> dict[str, Any]:
        b = self.boundary
        env = b.c.envelope if b is not None else None  # a safe boundary is read from its envelope
        return {
            "thread": self.key,
            "checkpoints": self.checkpoints,
            "by_status": {s: self.statuses.get(s, 0) for s in STATUSES},
            "latest": self.latest.to_json() if self.latest else None,
            "safe_boundary": None
            if b is None or env is None
            else {
                "boundary_id": env.boundary_id,
                "boundary_sequence": env.boundary_sequence,
                "checkpoint_id": b.row.checkpoint_id,
                "ts": iso_utc(b.ts),
            },
            "safe_boundaries": self.boundaries,
            "unfinalized": [
                {"checkpoint_id": v.row.checkpoint_id, "checkpoint_ns": v.row.checkpoint_ns,
                 "ts": iso_utc(v.ts), "state": state}
                for v, state in self.unfinalized
            ],
            "corrupt": [{"checkpoint_id": cid, "reason": r} for cid, r in self.corrupt],
            "anomalies": [{"checkpoint_id": cid, "anomaly": a} for cid, a in self.anomalies],
            "findings": self.findings(),
            "package_versions": counts_json(self.releases),
        }


# A checkpoint's own ts by (thread, namespace, id), None when it has none (compat.command.StoredDates).
Dates = Callable[[str, str, str], "datetime | None"]


def verdicts(rows: Iterable[EnvelopeRow], *, key: str, current_format: int, dates: Dates | None = None) -> Iterator[CheckpointVerdict]:
    """``dates``: where an id carries no UUIDv6 time, its checkpoint's ts is read from it."""
    for row in rows:
        metadata = {} if row.envelope is ABSENT else {key: row.envelope}
        c = classify(metadata, key=key, current_format=current_format, found=row.anomalies, error=row.error)
        stored = None
        if dates is not None and checkpoint_id_time(row.checkpoint_id) is None:
            stored = dates(row.thread_id, row.checkpoint_ns, row.checkpoint_id)
        yield CheckpointVerdict(row, c, stored)


def thread_report(
    thread: str,
    rows: Iterable[EnvelopeRow],
    *,
    key: str,
    current_format: int,
    now: datetime,
    grace: timedelta,
    dates: Dates | None = None,
) -> ThreadReport:
    """``rows``: one thread's checkpoints, newest first (as Store.iter_envelopes gives them).
    ``dates``: an id without a UUIDv6 time is dated by its checkpoint's ts (the instant rule)."""
    rep = ThreadReport(thread)
    first_any = None
    for v in verdicts(rows, key=key, current_format=current_format, dates=dates):
        rep.checkpoints += 1
        rep.statuses[v.c.status] += 1
        rep.releases[release_of(v.row.envelope)] += 1
        first_any = first_any or v
        root = v.row.checkpoint_ns == ""
        if root and rep.latest is None:
            rep.latest = v
        env = v.c.envelope
        if env is not None and env.safe_boundary and root:
            rep.boundaries += 1
            if rep.boundary is None:
                rep.boundary = v
        if env is not None and env.finalized is False:
            ts = v.ts
            young = ts is not None and now - ts < grace
            rep.unfinalized.append((v, IN_FLIGHT if young else INTERRUPTED))
        if v.c.error is not None:
            rep.corrupt.append((v.row.checkpoint_id, v.c.error))
        for a in v.c.anomalies:
            rep.anomalies.append((v.row.checkpoint_id, a))
    if rep.latest is None:
        rep.latest = first_any
    return rep


def thread_reports(rows: Iterable[EnvelopeRow], **kwargs: Any) -> Iterator[ThreadReport]:
    """Rows of many threads, ordered by thread: one report per thread, one thread in memory."""
    for thread, group in groupby(rows, key=lambda r: r.thread_id):
        yield thread_report(thread, group, **kwargs)


def failed(findings: dict[str, int], fail_on: Iterable[str]) -> list[str]:
    return [f for f in fail_on if findings.get(f, 0)]
