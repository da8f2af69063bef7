"""A changing command's options built from its operation's declared parameters (changes/params.py,
reached through api/params.py): the spellings, help, default and range written once, for the
command and for the Python API's keywords alike.

``command(group, name, parts)`` registers the decorated function as ``group``'s command ``name``,
its parameters ``parts`` in order: a declared ``Param`` (its typer option), or a ``(name,
Annotated type, default)`` of the command line's own (the KEY argument, ``--store``, ``--format``).
The function takes them all as keywords.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, List, Optional

import typer


_TYPES: dict[str, Any] = {"flag": bool, "int": int, "float": float, "text": str, "duration": str, "path": str}


def _parser(parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def parser(value: Any) -> Any:
        try:
            return parse(value)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None

    return parser


def option(param: Any) -> Any:
    """The typer option type (``Annotated[type, typer.Option]``) of one declared parameter."""
    extra: dict[str, Any] = {}
    if param.low is not None and param.cli_range:
        extra.update(min=param.low, max=param.high)
    if param.parser is not None:
        extra["parser"] = _parser(param.parser)
    if param.metavar is not None:
        extra["metavar"] = param.metavar
    if param.kind in ("keys", "key"):
        kind: Any = Optional[List[str]]
    else:
        kind = _TYPES[param.kind]
        if param.default is None:
            kind = Optional[kind]
    return Annotated[kind, typer.Option(*param.flags, help=param.help, **extra)]


def parameters(parts: list[Any]) -> list[inspect.Parameter]:
    out = []
    for part in parts:
        if isinstance(part, tuple):
            name, annotation, default = part
        else:
            if not part.cli:
                continue
            name, annotation, default = part.name, option(part), part.default
        out.append(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=annotation))
    return out


def command(group: typer.Typer, name: str, parts: list[Any], **settings: Any) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register ``fn`` as ``group``'s command ``name`` with ``parts`` as its parameters (``settings``: typer's)."""

    def register(fn: Callable[..., None]) -> Callable[..., None]:
        params = parameters(parts)
        fn.__signature__ = inspect.Signature(params, return_annotation=None)  # type: ignore[attr-defined]
        fn.__annotations__ = {p.name: p.annotation for p in params}
        group.command(name, **settings)(fn)
        return fn

    return register


def spliced(params: tuple[Any, ...], after: str, *parts: Any) -> list[Any]:
    """The declared parameters with the command line's own ``parts`` after the one named ``after``
    (the order --help lists them in)."""
    names = [p.name for p in params]
    i = names.index(after) + 1
    return [*params[:i], *parts, *params[i:]]
