"""The raw side of bench_scale.py: each job done by hand, as a user's script would, in its own process.

    python -m benchmarks.scale_raw JOB URL [PHRASE]

Jobs: ``page`` (the 20 most recently active threads: GROUP BY thread, newest max id first),
``all`` (one JSON object a thread, written), ``compat`` (the envelope's writer line, format
version and release of every checkpoint, grouped by thread: checkpoints and threads per line and
release, each line's first threads, the line of each thread's latest root checkpoint, as the
report gives them), ``usage`` (byte sums per thread over every table), ``search`` (each thread's
latest root checkpoint's bytes, read and tested for PHRASE without regard to case, as the
command's default),
``usage-marker`` (SQLite: the byte sums, and every row's metadata tested for a DeltaChannel marker).
Standard library and the store's driver only: nothing of symfonic_cli is imported.
"""

from __future__ import annotations

import json
import sys

LATEST = "(SELECT thread_id, max(checkpoint_id) AS cid FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id) m"
SQL = {
    "page": "SELECT thread_id, count(*), max(checkpoint_id) FROM checkpoints GROUP BY thread_id ORDER BY 3 DESC LIMIT 20",
    "all": "SELECT thread_id, count(*), min(checkpoint_id), max(checkpoint_id) FROM checkpoints GROUP BY thread_id",
}
SQLITE = {
    **SQL,
    # (thread, line, version, release, checkpoints, newest root id), in thread order: the
    # grouping's sort the only one.
    "compat": (
        "SELECT thread_id, json_extract(metadata, '$.symfonic_envelope.writer_line') AS line,"
        " json_extract(metadata, '$.symfonic_envelope.format_version') AS version,"
        " json_extract(metadata, '$.symfonic_envelope.package_version') AS release,"
        " count(*), max(CASE WHEN checkpoint_ns = '' THEN checkpoint_id END)"
        " FROM checkpoints GROUP BY thread_id, line, version, release ORDER BY thread_id"
    ),
    "usage": (
        "SELECT thread_id, sum(b) FROM (SELECT thread_id, sum(length(checkpoint) + coalesce(length(metadata), 0)) AS b"
        " FROM checkpoints GROUP BY thread_id UNION ALL SELECT thread_id, sum(length(value)) FROM writes GROUP BY thread_id)"
        " GROUP BY thread_id"
    ),
    "search": (
        f"SELECT m.thread_id, c.checkpoint FROM {LATEST} "
        "JOIN checkpoints c ON c.thread_id = m.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = m.cid"
    ),
    # The byte sums, and the test store usage makes of every row (a DeltaChannel marker in its
    # metadata, which SQLite keeps after the checkpoint's bytes: reading it reads the whole row).
    "usage-marker": (
        "SELECT thread_id, sum(b), max(m) FROM (SELECT thread_id, sum(length(checkpoint) + coalesce(length(metadata), 0)) AS b,"
        " max(instr(CAST(metadata AS TEXT), 'counters_since_delta_snapshot')) AS m FROM checkpoints GROUP BY thread_id"
        " UNION ALL SELECT thread_id, sum(length(value)), 0 FROM writes GROUP BY thread_id) GROUP BY thread_id"
    ),
}
POSTGRES = {
    **SQL,
    "compat": (
        "SELECT thread_id, e ->> 'writer_line', e ->> 'format_version', e ->> 'package_version',"
        " count(*), max(checkpoint_id) FILTER (WHERE checkpoint_ns = '')"
        " FROM (SELECT thread_id, checkpoint_ns, checkpoint_id, metadata -> 'symfonic_envelope' AS e FROM checkpoints) c"
        " GROUP BY 1, 2, 3, 4 ORDER BY 1"
    ),
    "usage": (
        "SELECT thread_id, sum(b) FROM ("
        "SELECT thread_id, pg_column_size(checkpoint) + coalesce(pg_column_size(metadata), 0) AS b FROM checkpoints"
        " UNION ALL SELECT thread_id, octet_length(blob) FROM checkpoint_blobs"
        " UNION ALL SELECT thread_id, octet_length(blob) FROM checkpoint_writes) u GROUP BY thread_id"
    ),
    "search": (
        f"SELECT m.thread_id, b.blob FROM {LATEST} "
        "JOIN checkpoints c ON c.thread_id = m.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = m.cid "
        "LEFT JOIN checkpoint_blobs b ON b.thread_id = c.thread_id AND b.checkpoint_ns = '' AND b.channel = 'messages' "
        "AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages'"
    ),
}


def _emit(job: str, rows, phrase: bytes) -> None:
    out = sys.stdout
    n = 0
    if job == "search":
        needle = phrase.lower()  # the command's default: case does not matter
        for _key, blob in rows:
            n += bool(blob) and needle in bytes(blob).lower()
        out.write(f"{n}\n")
        return
    if job == "compat":
        _compat(rows)
        return
    for row in rows:
        n += 1
        if job in ("page", "all"):
            out.write(json.dumps({"key": row[0], "checkpoints": row[1], "last_checkpoint_id": row[-1]}) + "\n")
    out.write(f"{n}\n")


def _compat(rows) -> None:
    """What compat report tallies: checkpoints and threads per (line, version) and per release,
    each line's first 10 threads, each thread's latest root checkpoint's line; one thread held."""
    lines: dict = {}  # (line, version) -> [checkpoints, threads, first threads]
    releases: dict = {}  # release -> [checkpoints, threads]
    latest: dict = {}  # (line, version) -> threads whose latest root checkpoint it is
    thread = newest = None
    seen_lines: set = set()
    seen_releases: set = set()

    def flush() -> None:
        for k in seen_lines:
            found = lines.setdefault(k, [0, 0, []])
            found[1] += 1
            if len(found[2]) < 10:
                found[2].append(thread)
        for r in seen_releases:
            releases.setdefault(r, [0, 0])[1] += 1
        if newest is not None:
            latest[newest[1]] = latest.get(newest[1], 0) + 1
        seen_lines.clear()
        seen_releases.clear()

    for tid, line, version, release, n, root in rows:
        if tid != thread:
            if thread is not None:
                flush()
            thread, newest = tid, None
        k = (line or "legacy", version or 0)
        lines.setdefault(k, [0, 0, []])[0] += n
        releases.setdefault(release, [0, 0])[0] += n
        seen_lines.add(k)
        seen_releases.add(release)
        if root is not None and (newest is None or root > newest[0]):
            newest = (root, k)
    if thread is not None:
        flush()
    sys.stdout.write(json.dumps({"lines": [[*k, *v] for k, v in sorted(lines.items(), key=str)],
                                 "releases": [[r, *v] for r, v in sorted(releases.items(), key=str)],
                                 "latest": [[*k, v] for k, v in sorted(latest.items(), key=str)]}) + "\n")


def _mongo(job: str, url: str, phrase: bytes) -> None:
    from pymongo import MongoClient

    base, _, db_name = url.rstrip("/").rpartition("/")
    client = MongoClient(base + "/")
    cps = client[db_name].checkpoints
    group = {"$group": {"_id": "$thread_id", "n": {"$sum": 1}, "last": {"$max": "$checkpoint_id"}}}
    if job in ("page", "all"):
        pipeline = [group, {"$sort": {"last": -1, "_id": 1}}] + ([{"$limit": 20}] if job == "page" else [])
        _emit(job, ((d["_id"], d["n"], d["last"]) for d in cps.aggregate(pipeline, allowDiskUse=True)), phrase)
    elif job == "compat":
        env = "$metadata.symfonic_envelope"
        key = {"t": "$thread_id", "e": [f"{env}.writer_line", f"{env}.format_version", f"{env}.package_version"]}
        root = {"$cond": [{"$eq": ["$checkpoint_ns", ""]}, "$checkpoint_id", None]}
        pipeline = [{"$group": {"_id": key, "n": {"$sum": 1}, "last": {"$max": root}}}, {"$sort": {"_id.t": 1}}]
        _emit(job, ((d["_id"]["t"], *(d["_id"]["e"] + [None] * 3)[:3], d["n"], d["last"])
                    for d in cps.aggregate(pipeline, allowDiskUse=True)), phrase)
    elif job == "usage":
        sums: dict[str, int] = {}
        for coll, field in ((cps, "checkpoint"), (client[db_name].checkpoint_writes, "value")):
            for d in coll.find({}, {"thread_id": 1, field: 1, "metadata": 1}):
                sums[d["thread_id"]] = sums.get(d["thread_id"], 0) + len(d.get(field) or b"") + len(str(d.get("metadata")))
        _emit(job, sums.items(), phrase)
    else:  # search: each thread's newest root checkpoint, in key order
        last = None

        def latest():
            nonlocal last
            for d in cps.find({"checkpoint_ns": ""}, {"thread_id": 1, "checkpoint": 1}).sort([("thread_id", 1), ("checkpoint_ns", 1), ("checkpoint_id", -1)]):
                if d["thread_id"] != last:
                    last = d["thread_id"]
                    yield last, d["checkpoint"]

        _emit(job, latest(), phrase)
    client.close()


def main(job: str, url: str, phrase: str = "") -> int:
    needle = phrase.encode()
    if url.startswith(("postgresql://", "postgres://")):
        import psycopg

        with psycopg.connect(url) as conn:
            cur = conn.cursor(name="raw")  # server-side: rows stream, as a script over a big table would
            cur.execute(POSTGRES[job])
            _emit(job, cur, needle)
    elif url.startswith("mongodb://"):
        _mongo(job, url, needle)
    else:
        import sqlite3

        conn = sqlite3.connect(f"file:{url.removeprefix('sqlite:///')}?mode=ro", uri=True)
        _emit(job, conn.execute(SQLITE[job]), needle)
        conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
