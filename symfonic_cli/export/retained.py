"""The access bundle's ``retained/<name>.json``: the messages the store still holds for a thread
that its current state no longer has (compaction removed them, a RemoveMessage, an older version
under the same id, a subgraph's or a pending write's). An access request (GDPR Art. 15) covers the
personal data held, not only what the application shows. ``--current-only`` leaves them out."""

from __future__ import annotations

import hashlib
import io
from typing import Any

DIRECTORY = "retained"


def retained_bytes(messages: list[Any]) -> bytes:
    """The file: what ``transcript show --retained --format json`` prints for these messages."""
    from symfonic_cli import render

    from symfonic_cli.environment import Environment

    buf = io.StringIO()
    render.write_records((m.to_json() for m in messages), fmt="json", columns=(), environment=Environment(stdout=buf))  # data: the bundle's retained/ file
    return buf.getvalue().encode("utf-8")


def add_retained(bundle: Any, store: Any, key: str, stem: str, entry: dict[str, Any]) -> None:
    """Add the thread's retained file (when it holds any message) and count it in the manifest entry."""
    from symfonic_cli.memory.retained import read_retained

    messages = [m for m in read_retained(store, key) if not m.current]
    entry["retained_messages"] = len(messages)
    if not messages:
        entry["retained_file"] = None
        return
    data = retained_bytes(messages)
    entry["retained_file"] = f"{DIRECTORY}/{stem}.json"
    entry["retained_sha256"] = hashlib.sha256(data).hexdigest()
    bundle.add(entry["retained_file"], data)
