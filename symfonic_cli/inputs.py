"""The key-file grammar: thread keys from a file or standard input (``--from-file``, its one reader).
Durations and times are read by symfonic_cli/clock.py.

A thread key is an exact string, so the grammar changes nothing in a key:

- The file is read as bytes. A UTF-8 byte order mark at its very start is dropped.
- Lines end at ``\\n`` only; one ``\\r`` before it is removed (files written on Windows). Nothing
  else is stripped or split: spaces, tabs, U+2028, U+0085, NBSP and the like are part of the key.
- A line that is empty (after removing the ``\\r``) or whose first character is ``#`` is skipped.
- A line that is a JSON object (``threads list -f jsonl``) stands for its ``key`` field, which
  must be a non-empty string: any key can be written this way, also one holding a newline or
  starting with ``#``. A line that starts with ``{`` but is not valid JSON is a key as it stands.
- The whole file may instead be one JSON array of objects with a ``key`` field (``threads list
  -f json``); an empty array holds no key.
- Invalid UTF-8 is a usage error naming the line. Duplicates count once, the first order kept.

Error messages hold the file name raw: the CLI escapes every error line as it prints it.
"""

from __future__ import annotations

import json

from symfonic_cli.errors import UsageError

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from symfonic_cli.environment import Environment

_BOM = b"\xef\xbb\xbf"


def read_key_file(source: str, *, option: str = "--from-file", environment: Environment | None = None) -> list[str]:
    """The thread keys of ``source`` (a path, or ``-`` for the environment's standard input), in
    order, each once."""
    where = "standard input" if source == "-" else source
    try:
        if source == "-":
            from symfonic_cli.environment import Environment

            data = (environment or Environment()).stdin_bytes()
        else:
            with open(source, "rb") as fh:
                data = fh.read()
    except OSError as exc:
        raise UsageError(f"cannot read {option} {where}: {exc.strerror or exc}") from None
    return parse_keys(data, where=where, option=option)


def parse_keys(data: bytes, *, where: str = "the key file", option: str = "--from-file") -> list[str]:
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    keys = _json_array(data, where, option)
    if keys is None:
        keys = list(_lines(data, where, option))
    seen: set[str] = set()
    unique = []
    for key in keys:
        if key not in seen:
            seen.add(key)
            unique.append(key)
    return unique


def _lines(data: bytes, where: str, option: str) -> Iterator[str]:
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if not raw or raw.startswith(b"#"):
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"{option} {where}, line {number}: not valid UTF-8") from None
        if line.startswith("{"):
            try:
                record = json.loads(line)
            except ValueError:
                record = None  # not JSON: a key that happens to start with "{"
            if isinstance(record, dict):
                yield _key_field(record, f"{option} {where}, line {number}")
                continue
        yield line


def _json_array(data: bytes, where: str, option: str) -> list[str] | None:
    """The keys of a whole-file JSON array of records, or None when the file is not one."""
    if not data.lstrip(b" \t\r\n").startswith(b"["):
        return None
    try:
        records = json.loads(data.decode("utf-8"))
    except ValueError:  # also UnicodeDecodeError: the line reader names the line
        return None
    if not isinstance(records, list) or (records and not isinstance(records[0], dict)):
        return None
    keys = []
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            raise UsageError(f"{option} {where}: JSON array element {i} is not an object with a 'key'")
        keys.append(_key_field(record, f"{option} {where}, JSON array element {i}"))
    return keys


def _key_field(record: dict, place: str) -> str:
    key = record.get("key")
    if not isinstance(key, str) or not key:
        raise UsageError(f"{place}: a JSON object needs a non-empty string 'key'")
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{place}: the 'key' holds an unpaired surrogate escape") from None
    return key
