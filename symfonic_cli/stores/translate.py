"""Driver errors become one-line StoreErrors: one decorator pair shared by every backend."""

from __future__ import annotations

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    pass


