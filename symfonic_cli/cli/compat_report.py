"""``symfonic compat report``'s body, free of typer: the typer command (cli/compat.py) and the quick
route (cli/fast.py) both call ``compat_report`` with the options as typed (None: not given)."""

from __future__ import annotations

from symfonic_cli.api.compat import BY_THREAD_COLUMNS, CURRENT_FORMAT, DEFAULT_ENVELOPE_KEY, STORE, THREAD
from symfonic_cli.cli.common import check_format, environment as run_environment, one_thread as single_thread_key
from symfonic_cli.errors import FindingsError, UsageError
from symfonic_cli.vocabulary import DEFAULT_FAIL_ON, FINDINGS

# typing.TYPE_CHECKING without importing typing (the quick route loads this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import timedelta
    from typing import Any

    from symfonic_cli.environment import Environment

DEFAULT_GRACE = "15m"  # as thread erase
DEFAULT_FAIL_ON_TEXT = ",".join(DEFAULT_FAIL_ON)  # --fail-on as typed


def compat_report(
    store: str | None = None, thread: list[str] | None = None, tenant: str | None = None, sub_tenant: str | None = None,
    session: str | None = None, by_thread: bool = False, grace: str | None = None, current_format: int | None = None,
    envelope_key: str | None = None, fmt: str | None = None, fail_on: str | None = None,
    environment: Environment | None = None,
) -> None:
    """Store-wide (default), one thread (--thread / --tenant --session) or every thread (--by-thread)."""
    env = environment or run_environment()
    grace = DEFAULT_GRACE if grace is None else grace
    current_format = CURRENT_FORMAT if current_format is None else current_format
    envelope_key = DEFAULT_ENVELOPE_KEY if envelope_key is None else envelope_key
    fail_on = DEFAULT_FAIL_ON_TEXT if fail_on is None else fail_on

    from symfonic_cli import render
    from symfonic_cli.cli.common import open_reading

    out_format = check_format(fmt, env=env)
    window = _grace(grace)
    gates = _fail_on(fail_on)
    key = _envelope_key(envelope_key)
    one_thread = thread is not None or tenant is not None or sub_tenant is not None or session is not None
    if by_thread and one_thread:
        raise UsageError("--by-thread reports every thread; leave out --thread/--tenant/--session")
    with open_reading(store, env) as st:
        chosen = single_thread_key(thread, tenant, sub_tenant, session) if one_thread else None
        outcome = st.compat(thread=chosen, by_thread=by_thread, grace=window, current_format=current_format, envelope_key=key)
        if outcome.mode == THREAD:
            _write_report(outcome, out_format, outcome.report.key, env)
        elif outcome.mode == STORE:
            rep = outcome.report
            _write_report(outcome, out_format, st.location, env)
            if rep.suggestion:
                other, n = rep.suggestion
                env.stderr.write(
                    render.escape_inline(f"symfonic: hint: nothing under '{key}', but {n} checkpoints carry an envelope "
                                         f"under '{other}'; pass --envelope-key {other}") + "\n"
                )
        else:
            records = outcome.rows(data=render.is_data(out_format))
            render.write_records(records, fmt=out_format, columns=BY_THREAD_COLUMNS, title=st.location, environment=env)
    hit = outcome.failed(gates)
    if hit:
        raise FindingsError(f"compat report: findings named by --fail-on present ({outcome.named(hit)})")


def _fail_on(value: str) -> tuple[str, ...]:
    names = tuple(n.strip().lower() for n in value.split(",") if n.strip())
    unknown = [n for n in names if n not in FINDINGS]
    if unknown:
        raise UsageError(f"unknown --fail-on finding '{unknown[0]}'", hint=f"use any of: {','.join(FINDINGS)}")
    return names


def _envelope_key(value: str) -> str:
    if not value:
        raise UsageError("--envelope-key is empty")
    return value



def _write_report(outcome: Any, out_format: str, title: str, env: Environment) -> None:
    """A store or thread report: its JSON document, or its pairs as a table."""
    from symfonic_cli import render

    if render.is_data(out_format):
        render.write_document(outcome.report.to_json(), out_format, env.stdout)
        return
    pairs = list(outcome.pairs(env))
    render.write_pairs(pairs, fmt=out_format, title=title, environment=env, styles=_finding_styles(outcome.report, pairs))


def _finding_styles(rep: Any, pairs: list[tuple[str, Any]]) -> list[str]:
    """Colour for what needs a look (issue #37), where colour is on: red for what no release here
    can read or what breaks a rollout (corrupt, newer, a plaintext value in an encrypted store,
    migrated services that cannot read all), yellow for writes a crash interrupted, anomalies and
    a rollback that could not read all."""
    data = rep.to_json()
    corrupt_ids = {c["checkpoint_id"] for c in data.get("corrupt") or () if isinstance(c, dict) and "checkpoint_id" in c}
    red_counts = ("corrupt: ", "newer: ", "threads whose latest checkpoint is corrupt", "threads whose latest checkpoint is newer",
                  "checkpoints corrupt", "checkpoints newer", "plaintext values in the encrypted store")
    styles = []
    for label, value in pairs:
        style = ""
        if label.startswith(red_counts) and not label.endswith((": releases", ": threads")) and value:
            style = "red"
        elif label in ("unfinalized interrupted by a crash",) and value:
            style = "yellow"
        elif label.startswith("anomaly") and value:
            style = "yellow"
        elif label.startswith("unfinalized ") and isinstance(value, str) and value.startswith("interrupted"):
            style = "yellow"
        elif label in ("migrated services can read all", "readable by migrated") and value is False:
            style = "red"
        elif label in ("rollback to legacy can read all", "readable by legacy") and value is False:
            style = "yellow"
        elif label == "latest status" and value in ("corrupt", "newer"):
            style = "red"
        elif label in corrupt_ids:
            style = "red"
        styles.append(style)
    return styles


def _grace(text: str) -> timedelta:
    from symfonic_cli.clock import parse_duration

    return parse_duration(text, option="--grace", bare_unit="m")
