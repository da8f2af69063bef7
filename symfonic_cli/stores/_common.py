"""What every backend shares: driver errors as one-line StoreErrors, the context-manager protocol."""

from __future__ import annotations

import functools

from symfonic_cli.errors import StoreError

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    _W = TypeVar("_W", bound="SupportsWith")
    _F = TypeVar("_F", bound=Callable[..., Any])  # a store method, kept as it is by the error translators

    from symfonic_cli.model.erase import ExtraTable, ThreadErasePlan

# The envelope fields EnvelopeShape groups by (JSON type, value); boundary_sequence goes by type only.
VALUE_GROUPED_FIELDS = ("format_version", "writer_line", "safe_boundary", "finalized")

# A value of each JSON type, standing for one whose content does not matter in an EnvelopeShape
# (a nested array or object, or a boundary_sequence, grouped by type only).
PLACEHOLDER_OF_KIND: dict[str, Any] = {"null": None, "boolean": False, "integer": 0, "number": 0.0, "string": "", "array": [], "object": {}}


def quoted_identifier(name: str) -> str:
    """A table or column name, "schema.table" allowed, as an SQL-quoted identifier (SQLite and
    PostgreSQL). Names are validated identifiers already (erase/extra.py); this is the second fence."""
    return ".".join('"' + part.replace('"', '""') + '"' for part in name.split("."))


class PerThreadErase:
    """The batch forms of a store's erase, one thread at a time (SQLite, MongoDB); PostgreSQL
    overrides both with fewer statements and round trips. The erase section defines the rest."""

    erase_plan: Callable[..., Any]  # EraseProtocol
    erase_thread: Callable[..., dict[str, int]]
    remaining_rows: Callable[..., dict[str, int]]

    def erase_plans(self, keys: list[str], extra: tuple[ExtraTable, ...]) -> list[ThreadErasePlan]:
        return [self.erase_plan(k, extra) for k in keys]

    def erase_verified(self, key: str, extra: tuple[ExtraTable, ...], *, expected: dict[str, int] | None = None,
                       idle_before: str | None = None) -> tuple[dict[str, int], dict[str, int]]:
        deleted = self.erase_thread(key, extra, expected=expected, idle_before=idle_before)
        return deleted, self.remaining_rows(key, extra)


def refuse_stored_code(shown: str, found: list[tuple[str, str]], what: str, hint: str) -> None:
    """A trigger (or rule) on a table an erase deletes from would run the store's own code inside
    each thread's transaction, where it could delete another thread's rows unseen by the plan check
    (it counts the statement's own rows): refused before anything is deleted."""
    if not found:
        return
    listed = ", ".join(f"'{n}' on '{t}'" for n, t in found[:5])  # escaped where printed
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    raise StoreError(
        f"{shown} has {what} on the tables an erase deletes from ({listed}{more}); "
        "they would run inside the erase and could change other threads: refused, nothing was deleted",
        hint=hint,
    )


def error_translators(
    driver_errors: Callable[[], tuple[type[BaseException], ...]],
    translate: Callable[[Any, BaseException], StoreError],
) -> tuple[Callable[[_F], _F], Callable[[_F], _F]]:
    """Decorators for store methods (plain and generator) that turn ``driver_errors()`` into
    ``translate(store, exc)``. The error types come from a callable so drivers load lazily."""

    def for_calls(fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return fn(self, *args, **kwargs)
            except driver_errors() as exc:
                raise translate(self, exc) from None

        return wrapper  # type: ignore[return-value]  # functools.wraps: fn's signature

    def for_iterators(fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                yield from fn(self, *args, **kwargs)
            except driver_errors() as exc:
                raise translate(self, exc) from None

        return wrapper  # type: ignore[return-value]  # functools.wraps: fn's signature

    return for_calls, for_iterators


class HeldMessages:
    """The messages each checkpoint holds (ReadProtocol.message_views): every backend reads them
    the same way, through its own ``iter_message_states`` (stores/messages.py, stores/delta.py)."""

    def message_views(self, key: str, *, decode: bool = True, states: Any = None) -> Any:
        from symfonic_cli.stores.messages import checkpoint_views

        return checkpoint_views(self, key, decode=decode, states=states)

    def delta_message_views(self, key: str) -> Any:
        from symfonic_cli.stores.messages import delta_views

        return delta_views(self, key)

    def written_messages(self, key: str) -> Any:
        from symfonic_cli.stores.messages import written_messages

        return written_messages(self, key)


class SupportsWith:
    def __enter__(self: _W) -> _W:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        raise NotImplementedError  # each store class closes its own connection

    def connection_lost(self) -> bool:
        return False  # ReadProtocol.connection_lost; PostgreSQL's says
