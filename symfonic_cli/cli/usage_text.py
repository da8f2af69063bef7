"""``symfonic store usage``'s report for a reader (storage/usage.py makes it): one JSON object, or
sections of pairs and tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

from symfonic_cli.environment import Environment


def write_report(report: dict[str, Any], fmt: str, out: TextIO, environment: Environment) -> None:
    from symfonic_cli import render

    from symfonic_cli.render.writers import is_data, write_document

    if is_data(fmt):
        write_document(report, fmt, out)
        return
    where = []
    if "files" in report:
        f = report["files"]
        where = [("file size", f["file_bytes"]), ("wal size", f["wal_bytes"]), ("page size", f["page_size"]),
                 ("pages", f["pages"]), ("free pages", f["free_pages"]), ("free size", f["free_bytes"])]
    pairs = [("store", report["store"]), ("kind", report["store_kind"]), *where]
    for name in ("checkpoints", "writes", "blobs"):
        part = report.get(name)
        if part is not None:
            pairs += [(name, part["count"]), (f"{name} size", part["bytes"])]
    r = report["reclaimable"]
    pairs += [(f"prune --keep {r['keep']}: checkpoints", r["checkpoints"]), (f"prune --keep {r['keep']}: threads", r["threads"]),
              (f"prune --keep {r['keep']}: reclaimable size", r["bytes"])]
    if r.get("skipped_threads"):
        pairs.append((f"prune --keep {r['keep']}: threads skipped (DeltaChannel)", r["skipped_threads"]))
    render.write_pairs(pairs, fmt=fmt, title="store usage", stream=out, environment=environment)
    if report.get("tables"):
        _section(out, fmt, "tables", report["tables"], ("name", "heap_size", "toast_size", "index_size", "dead_tuples", "live_tuples"),
                 ("table", "heap", "TOAST", "indexes", "dead tuples", "live tuples"), environment,
                 rename={"heap_bytes": "heap_size", "toast_bytes": "toast_size", "index_bytes": "index_size"})
    if report.get("collections"):
        _section(out, fmt, "collections", report["collections"], ("name", "storage_size", "free_size", "index_size", "documents"),
                 ("collection", "storage", "free", "indexes", "documents"), environment,
                 rename={"storage_bytes": "storage_size", "free_bytes": "free_size", "index_bytes": "index_size"})
    _section(out, fmt, "bytes per channel", report["channels"], ("channel", "table", "rows", "bytes_size"),
             ("channel", "table", "rows", "size"), environment, rename={"bytes": "bytes_size"})
    _section(out, fmt, f"largest threads (top {len(report['largest_threads'])})", report["largest_threads"],
             ("key", "bytes_size", "checkpoints"), ("thread", "size", "checkpoints"), environment, rename={"bytes": "bytes_size"})
    for note in report.get("notes") or ():
        out.write(f"note: {render.escape_inline(note)}\n")


def _section(out: TextIO, fmt: str, title: str, rows: list[dict[str, Any]], columns: Sequence[str], headers: Sequence[str],
             environment: Environment, rename: dict[str, str]) -> None:
    from symfonic_cli import render

    rows = [{rename.get(k, k): v for k, v in row.items()} for row in rows]
    if fmt == "text":
        out.write(f"\n# {title}\n")
    render.write_records(rows, fmt=fmt, columns=columns, headers=headers, title=title if fmt == "table" else None,
                         stream=out, environment=environment)
