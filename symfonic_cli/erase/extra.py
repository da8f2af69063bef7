"""The ``erase_extra`` tables of a store's config (the application's own tables an erase deletes from too), validated. No I/O."""

from __future__ import annotations

import re
from typing import Any

from symfonic_cli.errors import UsageError
from symfonic_cli.model.erase import ERASE_IDENTIFIER, ERASE_KEY_PARTS, MISSING_SUB_FORMS, ExtraTable

_NAME_RE = re.compile(rf"^{ERASE_IDENTIFIER}(\.{ERASE_IDENTIFIER})?$")
_COLUMN_RE = re.compile(rf"^{ERASE_IDENTIFIER}$")
# The savers' own tables/collections are the cascade already; declaring one is a mistake.
_SAVER_TABLES = {"checkpoints", "writes", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations"}


def parse_extra(options: dict[str, Any]) -> tuple[ExtraTable, ...]:
    """The ``erase_extra`` entries of a store's config into validated extra tables.

    Each entry: ``{table = "conversations", column = "thread_id"}`` (the column holds the whole
    thread key) or ``{table = "pause_tokens", match = {tenant_id = "tenant", sub_id = "sub",
    session_id = "session"}, missing_sub = "null"}``. A match must identify one thread: a
    ``thread`` column, or tenant + sub + session; tenant + session alone only with
    ``all_sub_tenants = true`` (the entry then covers that session under every sub-tenant).
    ``collection`` is accepted for ``table`` (MongoDB).
    """
    raw = options.get("erase_extra", [])
    if not isinstance(raw, list):
        raise UsageError("erase_extra must be a list of tables", hint='erase_extra = [{table = "t", column = "thread_id"}]')
    out: list[ExtraTable] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        where = f"erase_extra[{i}]"
        if not isinstance(entry, dict):
            raise UsageError(f"{where} must be a table like {{table = \"t\", column = \"thread_id\"}}")
        unknown = set(entry) - {"table", "collection", "column", "match", "missing_sub", "all_sub_tenants"}
        if unknown:
            raise UsageError(f"{where} has unknown key(s): {', '.join(sorted(unknown))}")
        name = entry.get("table", entry.get("collection"))
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise UsageError(f"{where}: table must be a plain identifier (letters, digits, _), got {name!r}")
        if name.split(".")[-1].lower() in _SAVER_TABLES:
            raise UsageError(f"{where}: '{name}' is a checkpoint table, erased anyway; declare only your own tables")
        if name in seen:
            raise UsageError(f"{where}: table '{name}' is declared twice")
        seen.add(name)
        if ("column" in entry) == ("match" in entry):
            raise UsageError(f"{where}: give exactly one of column or match")
        if "column" in entry:
            if not isinstance(entry["column"], str):  # a list or table is not a column name (nor hashable)
                raise UsageError(f"{where}: column must be a plain identifier, got {entry['column']!r}")
            match = {entry["column"]: "thread"}
        else:
            match = entry["match"]
            if not isinstance(match, dict) or not match:
                raise UsageError(f"{where}: match must map columns to one of {', '.join(ERASE_KEY_PARTS)}")
        pairs = []
        for column, part in match.items():
            if not isinstance(column, str) or not _COLUMN_RE.match(column):
                raise UsageError(f"{where}: column must be a plain identifier, got {column!r}")
            if part not in ERASE_KEY_PARTS:
                raise UsageError(f"{where}: column '{column}' must hold one of {', '.join(ERASE_KEY_PARTS)}, got {part!r}")
            pairs.append((column, part))
        held = [part for _, part in pairs]
        if len(set(held)) != len(held):
            raise UsageError(f"{where}: each key part may be mapped once, got {', '.join(held)}")
        missing_sub = entry.get("missing_sub", "null")
        if missing_sub not in MISSING_SUB_FORMS:
            raise UsageError(f"{where}: missing_sub must be one of \"null\", \"\", \"_\" (how the table stores a missing sub-tenant), got {missing_sub!r}")
        if "missing_sub" in entry and "sub" not in held:
            raise UsageError(f"{where}: missing_sub needs a column mapped to \"sub\"")
        all_subs = entry.get("all_sub_tenants", False)
        if not isinstance(all_subs, bool):
            raise UsageError(f"{where}: all_sub_tenants must be true or false, got {all_subs!r}")
        if all_subs and ("sub" in held or "thread" in held or not {"tenant", "session"} <= set(held)):
            raise UsageError(f"{where}: all_sub_tenants = true is only for a match of tenant and session columns without a sub column")
        if "thread" not in held and not {"tenant", "sub", "session"} <= set(held) and not all_subs:
            # Anything less than one thread's key could reach another thread's rows: refuse rather than over-erase.
            if {"tenant", "session"} <= set(held):
                raise UsageError(
                    f"{where}: tenant and session columns cannot tell sub-tenants apart (acme:eu:s-1 and acme:_:s-1)",
                    hint='map the sub-tenant column too (match = {..., sub_id = "sub"}), or declare all_sub_tenants = true',
                )
            raise UsageError(f"{where}: match must identify one thread: a column holding the whole key, or a tenant column with sub and session columns")
        out.append(ExtraTable(name, tuple(pairs), missing_sub, all_subs))
    return tuple(out)
