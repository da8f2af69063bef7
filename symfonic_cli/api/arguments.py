"""The Python API's arguments, checked before anything is opened (docs/python-api.md): each value
must be of its annotated type, exactly (a flag is a real ``bool``: ``yes="no"`` is not a yes), and
a number or a duration inside the range its command's option has (docs/reference/limits.md).
Anything else is a ``UsageError`` (exit 2) naming the argument, never a raw exception.

``@checked`` reads the function's own annotations (their text: ``bool``, ``int | None``,
``str | list[str] | None``, ``str | timedelta``, ...), so a new parameter is checked by its
annotation alone. The values themselves are never printed (a misplaced one may be a password).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, TypeVar

from symfonic_cli.errors import UsageError
from symfonic_cli.limits import MAX_CONNECT_TIMEOUT, MAX_COUNT, MAX_FORMAT_VERSION, MIN_CONNECT_TIMEOUT, connect_timeout_in_range

F = TypeVar("F", bound=Callable[..., Any])

# Whole numbers, by argument name: the ranges of the options they stand for (limits.py, as the
# options). A changing operation's own are declared with its parameters (changes/params.py: the
# option's range and the keyword's, one declaration).
RANGES: dict[str, tuple[int, int]] = {
    "limit": (0, MAX_COUNT), "index": (-MAX_COUNT, MAX_COUNT), "keep": (1, MAX_COUNT), "top": (1, MAX_COUNT),
    "current_format": (1, MAX_FORMAT_VERSION), "a": (-MAX_COUNT, MAX_COUNT), "b": (-MAX_COUNT, MAX_COUNT),
    "max_entries": (0, MAX_COUNT),
}
# The store options every function takes (``**options``, as open_store), and their types.
STORE_OPTIONS: dict[str, str] = {"connect_timeout": "float", "pg_schema": "str", "checkpoint_collection": "str",
                                 "writes_collection": "str"}
_WORDS = {"bool": "True or False", "int": "a whole number", "float": "a number", "str": "a string",
          "list[str]": "a list of strings", "timedelta": "a timedelta", "datetime": "a datetime",
          "dict[str, Any]": "a dict", "None": "None",
          "Callable[[Any], None]": "a function"}


def _fits(value: object, kind: str) -> bool:
    if kind == "None":
        return value is None
    if kind == "bool":
        return type(value) is bool
    if kind == "int":
        return type(value) is int
    if kind == "float":
        return type(value) in (int, float)
    if kind == "str":
        return isinstance(value, str)
    if kind == "list[str]":
        return isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
    if kind == "timedelta":
        return isinstance(value, timedelta)
    if kind == "datetime":
        return isinstance(value, datetime)
    if kind == "dict[str, Any]":
        return isinstance(value, dict) and all(isinstance(k, str) for k in value)
    if kind.startswith("Callable"):
        return callable(value)
    return True  # Any, or an annotation these rules do not know


PATHS = frozenset({"output", "receipt", "from_file"})  # a str that may also be given as a path object


def check(name: str, value: object, annotation: str) -> None:
    """``value`` against the annotation text; UsageError (exit 2) when it does not fit."""
    import os

    kinds = [k.strip() for k in annotation.split("|")]
    if name in PATHS and isinstance(value, os.PathLike):
        value = os.fspath(value)
    fit = next((k for k in kinds if _fits(value, k)), None)
    if fit is None:
        wanted = " or ".join(_WORDS.get(k, k) for k in kinds)
        raise UsageError(f"{name} must be {wanted}, not {type(value).__name__}")
    _in_range(name, value, fit)


def _in_range(name: str, value: Any, kind: str) -> None:
    if kind == "int" and name in RANGES:
        lo, hi = RANGES[name]
        if not lo <= value <= hi:
            raise UsageError(f"{name} must be a whole number from {lo:,} to {hi:,}")
    elif kind == "float" and name == "connect_timeout":
        if not connect_timeout_in_range(value):
            raise UsageError(f"connect_timeout must be {MIN_CONNECT_TIMEOUT} to {MAX_CONNECT_TIMEOUT:g} seconds")
    elif kind == "timedelta":
        from symfonic_cli.clock import MAX_DURATION_DAYS

        if not timedelta(0) <= value <= timedelta(days=MAX_DURATION_DAYS):
            raise UsageError(f"{name} must be a duration from 0s to {MAX_DURATION_DAYS}d")
    elif kind == "datetime" and (value.tzinfo is None or value.utcoffset() is None):
        raise UsageError(f"{name} is a naive datetime", hint="give a timezone-aware datetime (an instant)")
    elif kind == "str" and name in ("thread", "key", "text", "output") and not value:
        raise UsageError(f"{name} is empty")
    elif kind == "list[str]" and any(not v for v in value):
        raise UsageError(f"{name} holds an empty key")


def check_options(options: dict[str, Any]) -> None:
    """The store options of ``**options``: known names, each of its type and range."""
    for name, value in options.items():
        if name not in STORE_OPTIONS:
            raise UsageError(f"unknown store option '{name}'", hint=f"use any of: {', '.join(STORE_OPTIONS)}")
        check(name, value, STORE_OPTIONS[name])


def checked(fn: F) -> F:
    """Check every argument of ``fn`` by its annotation before ``fn`` runs (see the module)."""
    signature = inspect.signature(fn)
    params = [p for p in signature.parameters.values() if p.name != "self"]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise UsageError(f"{fn.__name__}: {exc}") from None
        for p in params:
            if p.name not in bound.arguments:
                continue
            value = bound.arguments[p.name]
            if p.kind is p.VAR_KEYWORD or (p.name.endswith("_options") and isinstance(value, dict)):
                check_options(value)
            if p.kind is not p.VAR_KEYWORD and p.kind is not p.VAR_POSITIONAL and isinstance(p.annotation, str):
                check(p.name, value, p.annotation)
        return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
