"""MongoDB stores: threads search has no byte prefilter in the database (the saver keeps each
checkpoint as one serialized binary field), so ``search/run.py`` streams each thread's latest
checkpoint and decodes it to confirm."""

from __future__ import annotations

from symfonic_cli.stores.mongodb._common import MongoSection

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class MongoSearch(MongoSection):
    """``search_candidates`` (stores/protocol.py, SearchProtocol): None, every thread is a candidate."""

    def search_candidates(self, prefilter: Any, *, tenant: str | None = None, sub_tenant: str | None = None) -> None:
        return None
