"""The raw work our commands are measured against, as separate processes.

``bytes STORE KEY``: read every stored byte of a thread without decoding (checkpoints, blobs,
writes). ``threads STORE``: the GROUP BY that ``threads list`` replaces. ``info STORE``: the
counts ``store info`` shows. SQLite through Python's sqlite3; PostgreSQL through psycopg.
"""

from __future__ import annotations

import sys


def _is_pg(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def _sqlite(url: str):
    import sqlite3

    path = url[len("sqlite:///"):] if url.startswith("sqlite:///") else url
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


SQLITE = {
    "bytes": [
        "SELECT checkpoint, metadata FROM checkpoints WHERE thread_id = ?",
        "SELECT value FROM writes WHERE thread_id = ?",
    ],
    "threads": ["SELECT thread_id, count(*), max(checkpoint_id) FROM checkpoints GROUP BY thread_id"],
    "info": [
        "SELECT count(*) FROM (SELECT DISTINCT thread_id FROM checkpoints)",
        "SELECT count(*) FROM checkpoints",
        "SELECT count(*) FROM writes",
    ],
}
POSTGRES = {
    "bytes": [
        "SELECT checkpoint::text, metadata::text FROM checkpoints WHERE thread_id = %s",
        "SELECT blob FROM checkpoint_blobs WHERE thread_id = %s",
        "SELECT blob FROM checkpoint_writes WHERE thread_id = %s",
    ],
    "threads": ["SELECT thread_id, count(*), max(checkpoint_id) FROM checkpoints GROUP BY thread_id"],
    "info": [
        "SELECT count(DISTINCT thread_id) FROM checkpoints",
        "SELECT count(*) FROM checkpoints",
        "SELECT count(*) FROM checkpoint_writes",
    ],
}


def main(what: str, url: str, key: str | None = None) -> int:
    params = (key,) if what == "bytes" else ()
    total = 0
    if _is_pg(url):
        import psycopg

        with psycopg.connect(url) as conn:
            for sql in POSTGRES[what]:
                for row in conn.execute(sql, params):
                    total += sum(len(v) if isinstance(v, (bytes, str, memoryview)) else 1 for v in row)
    else:
        conn = _sqlite(url)
        for sql in SQLITE[what]:
            for row in conn.execute(sql, params):
                total += sum(len(v) if isinstance(v, (bytes, str)) else 1 for v in row)
        conn.close()
    print(total)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
