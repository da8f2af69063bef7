"""``thread export``, the orchestration: select threads, read each transcript, write the bundle
and its manifest, from the store the API opened read-only; one thread is held in memory at a time."""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from symfonic_cli import __version__
from symfonic_cli.environment import Environment
from symfonic_cli.changes.report import Report
from symfonic_cli.errors import NotFoundError
from symfonic_cli.export.params import ExportRequest

if TYPE_CHECKING:
    from symfonic_cli.transcript.rows import Row
    from typing import BinaryIO
    from symfonic_cli.stores.protocol import Store
    from symfonic_cli.model.listing import ThreadSummary


def transcript_bytes(rows: list[Row], tools: bool) -> bytes:
    """Exactly what ``transcript show --format json [--tools]`` prints for these rows, as UTF-8."""
    from symfonic_cli import render

    buf = io.StringIO()
    render.write_records((r.to_json(tools) for r in rows), fmt="json", columns=(), environment=Environment(stdout=buf))  # data: the bundle's transcript file
    return buf.getvalue().encode("utf-8")


def state_bytes(store: Store, key: str) -> tuple[bytes, list[str]]:
    """The thread's latest root checkpoint, every channel as JSON (values the strict decoder
    does not rebuild are given from their raw fields, as ``thread diff`` gives them)."""
    from symfonic_cli import render
    from symfonic_cli.history.diff import jsonable, read_full

    head = store.read_checkpoint(key, checkpoint_id=None, channels=())
    if head is None:
        doc: dict[str, Any] = {"key": key, "checkpoint_id": None, "channels": {}}
        return (render.json_dumps(doc, indent=2) + "\n").encode("utf-8"), []
    record = read_full(store, key, "", head.checkpoint_id)
    warnings = []
    if record.blocked:
        warnings.append("not decoded (class not on the safe list, shown from its raw fields): " + ", ".join(sorted(record.blocked)))
    doc = {
        "key": key,
        "checkpoint_id": record.checkpoint_id,
        "ts": record.ts,
        "channels": {str(name): jsonable(value) for name, value in sorted(record.channel_values.items(), key=lambda kv: str(kv[0]))},
    }
    return (render.json_dumps(doc, indent=2) + "\n").encode("utf-8"), warnings


def _iso(t: datetime | None) -> str | None:
    from symfonic_cli.clock import iso_utc

    return iso_utc(t)


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote, for its caller to render (cli/export.py) or return (the Python API)."""

    output: str
    format: str  # dir, zip, tar.gz
    threads: int
    not_found: list[str]

    def document(self) -> dict[str, Any]:
        """What ``thread export -f json`` prints."""
        return {"output": self.output, "format": self.format, "threads": self.threads, "not_found": self.not_found}


def run(req: ExportRequest, environment: Environment | None = None, report: Report | None = None) -> ExportResult:
    """Deprecated: ``export_threads`` on the store the API opens (api/front.py). Checks the
    output, opens the store read-only and exports as ``export_threads``."""
    from symfonic_cli.stores import open_store

    report = report or Report()
    kind = check_output(req)
    store = open_store(req.location, writable=False, **req.options)
    report.opened(store.open_warnings)
    return export_threads(store, req, environment, report, kind=kind)


def check_output(req: ExportRequest) -> str:
    """The bundle's kind, once ``req.output`` is checked (never the store's own file, never an
    existing bundle without ``force``): exit 2, before the store is opened."""
    from symfonic_cli.export.bundle import check_target
    from symfonic_cli.output_paths import refuse_store_path

    refuse_store_path(req.output, req.location, "--output")
    return check_target(req.output, req.force)


def export_threads(store: Store, req: ExportRequest, environment: Environment | None = None, report: Report | None = None,
                   *, kind: str | None = None) -> ExportResult:
    """Write the bundle of what ``req`` selects in ``store`` (opened read-only, its warnings told
    by the opener; closed here) and say what was written; raises the error that ends the run
    (usage, not found, store). ``kind``: the bundle's, when the caller checked the output
    (``check_output``); else it is checked here. Writes no text: what a reader is told as it
    goes (a removed partial bundle, not-found keys, a transcript's warnings, progress) goes to
    ``report`` (changes/report.py: the caller's, by default no one)."""
    from symfonic_cli.changes.faults import Faults
    from symfonic_cli.changes.records import store_name
    from symfonic_cli.export.bundle import MANIFEST, Bundle, output_error, partial_leftovers, remove_leftover
    from symfonic_cli.export.names import UniqueNames
    from symfonic_cli.transcript.read import read_transcript

    env = environment or Environment()
    report = report or Report()
    faults = Faults.from_env()
    created = datetime.now(timezone.utc)
    try:
        if kind is None:
            kind = check_output(req)
        found, missing = _select(store, req, report)
        for leftover in partial_leftovers(req.output):
            # A killed export's half-written bundle: named, then removed (it is never a bundle).
            try:
                remove_leftover(leftover)
                report.leftover(leftover)
            except OSError as exc:
                report.leftover(leftover, exc.strerror or str(exc))
        try:
            bundle = Bundle(req.output, kind)
        except OSError as exc:
            raise output_error(req.output, exc) from None
        entries = _Entries()
        try:
            names = UniqueNames()
            progress = report.progress("exported", len(found), None, env.on_progress)
            for n, (key, summary) in enumerate(found, start=1):
                result = read_transcript(store, key, tools=req.tools)
                for warning in result.warnings:
                    report.warning(key, warning)
                stem = names.stem(key)
                data = transcript_bytes(result.rows, req.tools)
                entry: dict[str, Any] = {
                    "key": key,
                    "file": f"transcript/{stem}.json",
                    "rows": len(result.rows),
                    "first_activity": _iso(summary.first_at),
                    "last_activity": _iso(summary.last_at),
                    "sha256": hashlib.sha256(data).hexdigest(),
                }
                bundle.add(entry["file"], data)
                if not req.current_only:
                    from symfonic_cli.export.retained import add_retained

                    add_retained(bundle, store, key, stem, entry)
                if req.with_state:
                    state, warnings = state_bytes(store, key)
                    for warning in warnings:
                        report.warning(key, warning)
                    entry["state_file"] = f"state/{stem}.json"
                    entry["state_sha256"] = hashlib.sha256(state).hexdigest()
                    bundle.add(entry["state_file"], state)
                entries.append(entry)
                progress.step(n)
                faults.pause()
            progress.end(len(entries))
            head = {
                "tool": "symfonic",
                "tool_version": __version__,
                "created": _iso(created),
                "store": store_name(req.location),
                "selection": req.selection,
            }
            tail = {"not_found": missing} if missing else {}
            with entries.manifest(head, tail) as manifest:
                bundle.add_file(MANIFEST, manifest, manifest.seek(0, 2))
            bundle.commit(req.force)
        except OSError as exc:
            # A name the system refuses or a disk that fails: nothing partial is left, a documented code.
            bundle.discard()
            raise output_error(req.output, exc) from None
        except BaseException:
            # Ctrl-C (exit 130) or any error: the partial bundle beside the target goes; nothing at the target.
            bundle.discard()
            raise
        finally:
            entries.close()
    finally:
        store.close()
    return ExportResult(req.output, kind, len(entries), missing)


def _select(store: Store, req: ExportRequest, report: Report) -> tuple[Any, list[str]]:
    """The threads to export as (key, summary) pairs (a retention window's read a page at a time)
    and the requested keys not found (told to ``report`` with suggestions; an error unless missing_ok)."""
    from symfonic_cli.suggestions import Suggester, not_found_message

    where = req.location.display
    missing: list[str] = []
    found: list[tuple[str, ThreadSummary]] | _IdleThreads
    if req.keys is not None:
        found = []
        for key in req.keys:
            summary = store.thread_summary(key)
            if summary is not None:
                found.append((key, summary))
            else:
                missing.append(key)
    elif req.window is not None:
        # Counted in the database, then read a page of keys at a time: nothing grows with the count.
        found = _IdleThreads(store, req)
    else:
        # Keys holding only pending writes (no checkpoint) have no transcript: not listed.
        found = [(k, s) for k in store.thread_keys_with_prefix(req.prefix or "") if (s := store.thread_summary(k)) is not None]
    if missing:
        from symfonic_cli.changes.plan import NOT_FOUND, Miss

        suggester = Suggester(store)
        if not req.missing_ok and len(missing) == 1:  # one line: the error names the key and its near misses
            raise NotFoundError(not_found_message(missing[0], where, suggester) + "; nothing exported", hint="--missing-ok to export the others")
        report.misses({key: Miss(NOT_FOUND, suggestions=suggester.suggest(key)) for key in missing})
        if not req.missing_ok:
            raise NotFoundError(f"{len(missing)} requested threads not found in {where}; nothing exported", hint="--missing-ok to export the others")
    if req.keys is None and req.window is None and not found and not req.missing_ok:
        raise NotFoundError(f"no thread matches the prefix '{req.prefix}' in {where}; nothing exported", hint="--missing-ok to accept")
    return found, missing


def plan(req: ExportRequest, environment: Environment) -> dict[str, Any]:
    """Deprecated: ``plan_threads`` on the store the API opens (api/front.py)."""
    from symfonic_cli.stores import open_store

    kind = check_output(req)
    return plan_threads(open_store(req.location, writable=False, **req.options), req, kind=kind)


def plan_threads(store: Store, req: ExportRequest, *, kind: str | None = None) -> dict[str, Any]:
    """What ``export_threads`` would write from ``store`` (opened read-only; closed here), with its
    checks made (the output, the selection), writing nothing: the threads with their checkpoints
    and activity, as one document (the Python API's plan). ``kind``: as ``export_threads``'s."""
    from symfonic_cli.changes.records import store_name

    try:
        if kind is None:
            kind = check_output(req)
        found, missing = _select(store, req, Report())
        threads = [{"key": key, "checkpoints": s.checkpoints, "first_activity": _iso(s.first_at), "last_activity": _iso(s.last_at)}
                   for key, s in found]
    finally:
        store.close()
    return {
        "dry_run": True, "store": store_name(req.location), "output": req.output, "format": kind, "selection": req.selection,
        "summary": {"threads": len(threads), "not_found": len(missing)}, "threads": threads, "not_found": missing,
    }


class _IdleThreads:
    """The threads of a retention window as (key, summary) pairs, in key order, read a page at a
    time (``window_keys``); ``len`` is the count the database gives."""

    def __init__(self, store: Store, req: ExportRequest) -> None:
        from symfonic_cli.changes.steps import DEFAULT_BATCH

        w = req.window
        self.store, self.batch = store, req.batch_size or DEFAULT_BATCH
        self.window = {"tenant": req.tenant, "sub_tenant": req.sub_tenant, "last_before": w.last_before, "last_from": w.last_from}
        self.total = store.window_count(**self.window)

    def __len__(self) -> int:
        return self.total

    def __bool__(self) -> bool:
        return True  # nothing idle is an empty bundle, not a miss

    def __iter__(self):
        after, n = None, 0
        while n < self.total:
            keys = self.store.window_keys(**self.window, after=after, limit=min(self.batch, self.total - n))
            if not keys:
                return
            after = keys[-1]
            for key in keys:
                summary = self.store.thread_summary(key)
                if summary is not None:  # erased meanwhile: nothing to export
                    n += 1
                    yield key, summary


class _Entries:
    """The manifest's per-thread entries, spooled to an anonymous temporary file (0600, gone on
    close) rather than held in memory; ``manifest`` writes the whole manifest.json from it."""

    def __init__(self) -> None:
        import tempfile

        self.file = tempfile.TemporaryFile("w+b")
        self.count = 0

    def __len__(self) -> int:
        return self.count

    def append(self, entry: dict[str, Any]) -> None:
        from symfonic_cli.render import json_dumps

        self.file.write(json_dumps(entry).encode("utf-8") + b"\n")  # data: the manifest's spool
        self.count += 1

    def manifest(self, head: dict[str, Any], tail: dict[str, Any]) -> BinaryIO:
        """manifest.json (the document ``json_dumps(..., indent=2)`` would give), in a temporary file at offset 0."""
        import json
        import tempfile

        from symfonic_cli.render import json_dumps

        out = tempfile.TemporaryFile("w+b")

        def member(name: str, value: Any) -> bytes:
            return (f"  {json_dumps(name)}: " + json_dumps(value, indent=2).replace("\n", "\n  ")).encode("utf-8")

        out.write(b"{\n" + b"".join(member(k, v) + b",\n" for k, v in head.items()) + b'  "threads": [')  # data: manifest.json
        self.file.seek(0)
        for n, line in enumerate(self.file):
            text = json_dumps(json.loads(line), indent=2).replace("\n", "\n    ")
            out.write((b",\n    " if n else b"\n    ") + text.encode("utf-8"))  # data: manifest.json
        out.write((b"\n  ]" if self.count else b"]") + b"".join(b",\n" + member(k, v) for k, v in tail.items()) + b"\n}\n")  # data: manifest.json
        out.flush()
        return out

    def close(self) -> None:
        self.file.close()
