"""``symfonic compat report`` and ``compat show``, the library side: which report a request asks
for, read from an open store, and the reports shaped into the records and pairs the CLI renders.

Free of the command line: the CLI parses options, calls ``run_report`` / ``checkpoint_verdicts``
and renders what they return.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from symfonic_cli.clock import id_at
from symfonic_cli.compat import report as cr
from symfonic_cli.compat.releases import release_text, releases_text, threads_text
from symfonic_cli.errors import NotFoundError
from symfonic_cli.environment import Environment

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.stores.protocol import Store

STORE, THREAD, BY_THREAD = "store", "thread", "by-thread"


@dataclass
class CompatRequest:
    envelope_key: str
    current_format: int
    grace: timedelta
    now: datetime
    mode: str = STORE  # store | thread | by-thread
    thread: str | None = None  # the thread key of mode "thread"


@dataclass
class CompatOutcome:
    mode: str
    report: Any = None  # StoreReport (store) or ThreadReport (thread)
    reports: Iterator[Any] | None = None  # by-thread: one ThreadReport at a time, lazily
    # Findings by name; for by-thread complete only once ``reports`` is consumed.
    findings: dict[str, int] = field(default_factory=dict)


class StoredDates:
    """A checkpoint's own ts (clock.ts_time), for ids that carry no UUIDv6 time: its thread's
    checkpoint heads read once, when the first such id of the thread is met (one thread kept)."""

    def __init__(self, st: Store) -> None:
        self.st = st
        self.thread: str | None = None
        self.times: dict[tuple[str, str], datetime | None] = {}

    def __call__(self, thread: str, ns: str, checkpoint_id: str) -> datetime | None:
        from symfonic_cli.clock import ts_time

        if thread != self.thread:
            self.thread = thread
            self.times = {(h.checkpoint_ns, h.checkpoint_id): ts_time(h.ts) for h in self.st.iter_checkpoint_heads(thread)}
        return self.times.get((ns, checkpoint_id))


def run_report(st: Store, req: CompatRequest) -> CompatOutcome:
    """The report a request asks for, from an open store."""
    kwargs: dict[str, Any] = {"key": req.envelope_key, "current_format": req.current_format, "now": req.now, "grace": req.grace,
                              "dates": StoredDates(st)}
    if req.mode == THREAD:  # the caller has checked that the thread exists
        assert req.thread is not None  # mode "thread" names its thread
        rep = cr.thread_report(req.thread, st.iter_envelopes(req.envelope_key, thread=req.thread), **kwargs)
        return CompatOutcome(THREAD, report=rep, findings=rep.findings())
    if req.mode == BY_THREAD:
        findings = {f: 0 for f in cr.FINDINGS}

        def reports():
            # One thread in memory at a time; the findings are tallied as the reports stream.
            for rep in cr.thread_reports(st.iter_envelopes(req.envelope_key), **kwargs):
                for f, n in rep.findings().items():
                    findings[f] += n
                yield rep

        return CompatOutcome(BY_THREAD, reports=reports(), findings=findings)
    store_rep = cr.store_report(
        st.envelope_shapes(req.envelope_key, older_than=id_at(req.now - req.grace)),
        key=req.envelope_key, current_format=req.current_format,
    )
    census = st.encryption_census()
    if census.encrypted:
        store_rep.encryption = census  # plaintext values in an encrypted store are a finding
    if cr.wants_key_suggestion(store_rep):
        found = st.envelope_key_candidates(req.envelope_key, limit=1)
        store_rep.suggestion = found[0] if found else None
    return CompatOutcome(STORE, report=store_rep, findings=store_rep.findings())


def checkpoint_verdicts(st: Store, thread: str, *, envelope_key: str, current_format: int, checkpoint: str | None = None):
    """``compat show``: every checkpoint's verdict, newest first, or the one named by ``checkpoint``
    (the caller has checked that the thread exists)."""
    verdicts = cr.verdicts(st.iter_envelopes(envelope_key, thread=thread), key=envelope_key, current_format=current_format,
                           dates=StoredDates(st))
    if checkpoint is None:
        return verdicts
    found = next((v for v in verdicts if v.row.checkpoint_id == checkpoint), None)
    if found is None:
        raise NotFoundError(f"no checkpoint '{checkpoint}' in thread '{thread}'")
    return found


# -- reports as records and pairs (unescaped: the renderer escapes)


def store_pairs(rep: cr.StoreReport, environment: Environment | None = None) -> list[tuple[str, Any]]:
    data = rep.to_json()
    verdict = data["verdict"]
    pairs: list[tuple[str, Any]] = [
        ("envelope key", rep.envelope_key),
        ("understood formats", f"0..{rep.current_format}"),
        ("checkpoints", rep.checkpoints),
        ("threads", rep.threads),
    ]
    for row in data["package_versions"]:
        pairs.append((f"release {release_text(row['package_version'])}",
                      f"{_n(row['checkpoints'], 'checkpoint')} in {_n(row['threads'], 'thread')}"))
    for row in data["by_writer_line"]:
        pairs.append((f"checkpoints {row['writer_line']} v{row['format_version']}", row["checkpoints"]))
    named = data["finding_threads"]
    for label, row in [*((f"corrupt: {r['reason']}", r) for r in named["corrupt"]["by_reason"]),
                       *((f"newer: format_version {r['format_version']}", r) for r in named["newer"]["by_format_version"])]:
        pairs.append((label, row["checkpoints"]))
        pairs += _named(label, row)
    for status, n in data["latest_checkpoint_of_threads"].items():
        pairs.append((f"threads whose latest checkpoint is {status}", n))
    for row in data["anomalies"]:
        pairs.append((f"anomaly: {row['anomaly']}", row["checkpoints"]))
    pairs.append(("unfinalized in flight", rep.in_flight))
    pairs.append(("unfinalized interrupted by a crash", rep.interrupted))
    for finding in ("interrupted", "legacy"):
        if data["findings"][finding]:
            pairs += _named(finding, named[finding])
    pairs.append(("migrated services can read all", bool(verdict["migrated_can_read_all"])))
    pairs.append(("rollback to legacy can read all", bool(verdict["legacy_can_read_all"])))
    if rep.encryption is not None:
        pairs.append(("encryption", rep.encryption.describe()))
        pairs.append(("plaintext values in the encrypted store", rep.encryption.finding() or 0))
    if rep.suggestion:
        other, n = rep.suggestion
        pairs.append(
            ("suggestion", f"no envelope under '{rep.envelope_key}', but {n} checkpoints carry one under "
                           f"'{other}': pass --envelope-key {other}")
        )
    return pairs


def _n(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _named(label: str, found: dict[str, Any]) -> list[tuple[str, Any]]:
    """A finding's releases and first threads, as two lines under its own."""
    return [(f"{label}: releases", releases_text(found["package_versions"])), (f"{label}: threads", threads_text(found))]


def thread_pairs(rep: cr.ThreadReport, environment: Environment) -> list[tuple[str, Any]]:
    """For table and text: times in --tz (``environment``'s; the JSON report stays UTC)."""
    from symfonic_cli.render import shown_time

    data = rep.to_json()
    latest = data["latest"] or {}
    b = data["safe_boundary"]
    pairs: list[tuple[str, Any]] = [
        ("checkpoints", rep.checkpoints),
        *((f"checkpoints {s}", n) for s, n in data["by_status"].items()),
        ("latest checkpoint", latest.get("checkpoint_id")),
        ("latest status", latest.get("status")),
        ("latest writer line", latest.get("writer_line")),
        ("latest format version", latest.get("format_version")),
        ("readable by legacy", latest.get("readable_by_legacy")),
        ("readable by migrated", latest.get("readable_by_migrated")),
        ("reason", latest.get("reason")),
        ("latest safe boundary", None if b is None else f"{b['boundary_id']} (sequence {b['boundary_sequence']}) "
                                                        f"at checkpoint {b['checkpoint_id']}, {shown_time(b['ts'], environment)}"),
        ("safe boundaries", data["safe_boundaries"]),
        ("releases", releases_text(data["package_versions"])),
    ]
    for u in data["unfinalized"]:
        pairs.append((f"unfinalized {u['checkpoint_id']}", f"{u['state']} ({shown_time(u['ts'], environment)})"))
    for c in data["corrupt"]:
        pairs.append((f"{c['checkpoint_id']}", c["reason"]))
    for a in data["anomalies"]:
        pairs.append((f"anomaly {a['checkpoint_id']}", a["anomaly"]))
    return pairs


def thread_row(rep: cr.ThreadReport) -> dict[str, Any]:
    """One row of ``--by-thread`` as a table shows it."""
    data = rep.to_json()
    latest = data["latest"] or {}
    b = data["safe_boundary"]
    findings = data["findings"]
    return {
        "thread": rep.key,
        "checkpoints": rep.checkpoints,
        "latest_status": latest.get("status"),
        "writer_line": latest.get("writer_line"),
        "format_version": latest.get("format_version"),
        "safe_boundary": None if b is None else f"{b['boundary_id'] or '(no id)'} @ {b['checkpoint_id']}",
        "in_flight": len(data["unfinalized"]) - findings["interrupted"],
        "interrupted": findings["interrupted"],
        "corrupt": findings["corrupt"],
        "newer": findings["newer"],
        "releases": releases_text(data["package_versions"]),
    }
