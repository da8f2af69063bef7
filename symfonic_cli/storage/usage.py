"""``symfonic store usage``: where a store's bytes are and what a prune would give back.

The backend aggregates in the database (stores/<kind>/usage.py); this module only shapes the
report, one JSON object (the command line renders it: cli/usage_text.py). Read-only."""

from __future__ import annotations

from typing import Any

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.stores.protocol import Store

DEFAULT_TOP = 10


def usage_report(store: Store, *, top: int = DEFAULT_TOP, keep: int = 1) -> dict[str, Any]:
    report = {"store": store.location.display, "store_kind": store.kind}
    report.update(store.store_usage(top=top, keep=keep))
    return report
