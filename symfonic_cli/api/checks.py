"""``checked`` for the reading API, loaded when needed: ``api.arguments.checked`` (every argument
against its annotation and its option's range) made at the first call that needs it. A ``Store``
a command line opened (``open_reading(..., parsed=True)``) skips it: its parser has already held
every value to the same limits (limits.py), and the quick route (cli/fast.py) then loads neither
``inspect`` nor ``typing``. The browser and the MCP server are checked as any caller."""

from __future__ import annotations

import functools

# typing.TYPE_CHECKING without importing typing (the quick route loads this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    F = TypeVar("F", bound=Callable[..., Any])


def checked(fn: F) -> F:
    made: list = []  # the checking function, once made

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if args and getattr(args[0], "_parsed", False):
            return fn(*args, **kwargs)
        if not made:
            from symfonic_cli.api.arguments import checked as check

            made.append(check(fn))
        return made[0](*args, **kwargs)

    return wrapper  # type: ignore[return-value]
