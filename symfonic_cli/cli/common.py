"""Helpers shared by the command groups: which store, which format (which thread: ``selection.py``).

Free of typer, so the quick route (``fast.py``) can use them; the typer option types are in
``options.py``.
"""

from __future__ import annotations

import os

from symfonic_cli.cli.rootspec import (  # noqa: F401 - the root options' environment variables
    AES_KEY_FILE_ENV,
    CONNECT_TIMEOUT_ENV,
    DEBUG_ENV,
    ROOT_ENV,
    TZ_ENV,
)
from symfonic_cli.errors import UsageError
from symfonic_cli.limits import (  # noqa: F401 - the commands' options read them from here
    DEFAULT_CONNECT_TIMEOUT,
    MAX_BATCH,
    MAX_CONNECT_TIMEOUT,
    MAX_COUNT,
    MAX_FORMAT_VERSION,
    MAX_JOBS,
    MIN_CONNECT_TIMEOUT,
    connect_timeout_in_range,
    connect_timeout_range,
)
from symfonic_cli.vocabulary import FORMATS, listed

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.environment import Environment
    from typing import Any, Optional

    from collections.abc import Sequence
    from typing import TextIO

    Store = Any  # the stores' own object (api.opening.open_backend)
    from symfonic_cli.api.store import Store as ApiStore


def check_format(fmt: Optional[str], *, env: Environment | None = None, formats: tuple[str, ...] = FORMATS) -> str:
    """``--format``: one of ``formats`` (vocabulary.FORMATS, every command's; RECORD_FORMATS for
    the commands that print records), else a table on a terminal and text elsewhere (the run's
    stdout decides)."""
    from symfonic_cli.render import default_format

    if fmt is not None and fmt.lower() not in formats:
        raise UsageError(f"unknown --format '{fmt}'", hint=f"use one of: {listed(formats)}")
    return default_format(fmt.lower() if fmt else None, env or environment())


TZ_HINT = "use UTC, an offset such as +02:00, or an IANA name such as Europe/Berlin"


def set_tz(environment: Environment, name: str) -> None:
    """``--tz NAME`` for this run; an unknown zone is a usage error (exit 2), one line."""
    try:
        environment.set_tz(name)
    except ValueError as exc:
        raise UsageError(f"--tz: {exc}", hint=TZ_HINT) from None


# click's boolean words, so SYMFONIC_DEBUG means the same to both routes.
TRUE_WORDS = frozenset({"1", "true", "t", "yes", "y", "on"})
FALSE_WORDS = frozenset({"0", "false", "f", "no", "n", "off"})


def debug_enabled() -> bool:
    return os.environ.get(DEBUG_ENV, "").strip().lower() in TRUE_WORDS


def environment():
    """The running command's Environment: the one ``main()`` gave click as its ``obj`` (a typer
    command reaches it through click's context; the quick route passes it as an argument). A
    fresh one on the process's streams for a command function called outside ``main()``."""
    import sys

    from symfonic_cli.environment import Environment

    click = sys.modules.get("click")  # not loaded: no command line is running
    ctx = click.get_current_context(silent=True) if click is not None else None
    env = ctx.find_object(Environment) if ctx is not None else None
    return env if env is not None else Environment()


def apply_root_options(
    environment: Environment,
    *,
    debug: bool,
    connect_timeout: float,
    pg_schema: Optional[str],
    checkpoint_collection: Optional[str],
    writes_collection: Optional[str],
    aes_key_file: Optional[str] = None,
) -> None:
    """What the options before the command name mean for this run."""
    from symfonic_cli.api.opening import use_key_file

    use_key_file(aes_key_file)  # read and checked now (exit 2); never printed
    environment.debug = debug
    connection: dict[str, Any] = {"connect_timeout": connect_timeout}
    for name, value in (
        ("pg_schema", pg_schema),
        ("checkpoint_collection", checkpoint_collection),
        ("writes_collection", writes_collection),
    ):
        if value is not None:
            connection[name] = value
    environment.connection = connection


def open_reading(store_opt: Optional[str], environment: Environment, *, zone: Any = None, parsed: bool = True) -> ApiStore:
    """The store, opened read-only by the one opener (api/opening.py) as the API's Store, what the
    driver warned about while opening written to stderr; use it in a ``with`` block, which closes
    it. ``zone``: a command's --tz, for the times its options give; ``parsed``: the command line's
    parser checked the arguments (the browser and the MCP server: False, the API checks them)."""
    from symfonic_cli.api.opening import open_reading as opened

    store = opened(store_opt, environment.connection, zone=zone, parsed=parsed)
    write_warnings(store.open_warnings, environment.stderr)
    return store


def write_warnings(warnings: Sequence[str], stderr: TextIO) -> None:
    """What the driver warned about while opening (only MongoDB's driver warns), a line each."""
    for line in warnings:
        stderr.write(f"symfonic: warning: {line}\n")


def one_thread(thread: list[str] | None, tenant: str | None, sub_tenant: str | None, session: str | None) -> str:
    """``api.opening.one_thread``, imported when a command runs (not for its ``--help``)."""
    from symfonic_cli.api.opening import one_thread as chosen

    return chosen(thread, tenant, sub_tenant, session)
