"""``symfonic compat report|show``: the compatibility envelopes of a store, read-only.

Only checkpoint metadata is read; nothing is ever stamped, repaired or moved.
"""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from symfonic_cli.cli.common import (
    MAX_FORMAT_VERSION,
    check_format,
    environment,
    open_for_reading,
)
from symfonic_cli.suggestions import require_thread
from symfonic_cli.cli.options import (
    KeyArg,
    FormatOpt,
    SessionOpt,
    StoreOpt,
    SubTenantOpt,
    TenantOpt,
    ThreadOpt,
    with_key,
)
from symfonic_cli.compat.envelope import (
    CURRENT_FORMAT,
    DEFAULT_ENVELOPE_KEY,
    ENVELOPE_KEY_ENV,
)
from symfonic_cli.errors import FindingsError, UsageError
from symfonic_cli.vocabulary import DEFAULT_FAIL_ON, FINDINGS, GROUP_HELP
from symfonic_cli.cli.common import one_thread as single_thread_key
from symfonic_cli.environment import Environment

app = typer.Typer(help=GROUP_HELP["compat"], no_args_is_help=True)

EnvelopeKeyOpt = Annotated[
    str,
    typer.Option("--envelope-key", envvar=ENVELOPE_KEY_ENV, show_envvar=True, help="Metadata key holding the envelope."),
]
CurrentFormatOpt = Annotated[
    int, typer.Option("--current-format", min=1, max=MAX_FORMAT_VERSION, help="Newest envelope format_version the running release understands (1 to 1000000).")
]
GraceOpt = Annotated[
    str,
    typer.Option("--grace", help="Unfinalized writes younger than this are 'in flight', older ones 'interrupted by a crash' (default 15m, as thread erase; e.g. 90s, 2h)."),
]
_DEFAULT_FAIL_ON = ",".join(DEFAULT_FAIL_ON)  # --fail-on as typed
FailOnOpt = Annotated[
    str,
    typer.Option("--fail-on", help=f"Exit 5 when any of these findings is present: {','.join(FINDINGS)} ('' for never)."),
]


def register(app_: typer.Typer) -> None:
    app_.add_typer(app, name="compat")


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


@app.command("report")
def report(
    key: KeyArg = None,
    store: StoreOpt = None,
    thread: ThreadOpt = None,
    tenant: TenantOpt = None,
    sub_tenant: SubTenantOpt = None,
    session: SessionOpt = None,
    by_thread: Annotated[bool, typer.Option("--by-thread", help="One report per thread, for every thread: all the threads of a finding (the store-wide report names the first 10).")] = False,
    grace: GraceOpt = "15m",
    current_format: CurrentFormatOpt = CURRENT_FORMAT,
    envelope_key: EnvelopeKeyOpt = DEFAULT_ENVELOPE_KEY,
    fmt: FormatOpt = None,
    fail_on: FailOnOpt = _DEFAULT_FAIL_ON,
) -> None:
    """Store-wide (default), one thread (--thread / --tenant --session) or every thread (--by-thread)."""
    thread = with_key(key, thread)
    from datetime import datetime, timezone

    from symfonic_cli import render
    from symfonic_cli.compat import command as cc
    from symfonic_cli.compat.report import failed

    out_format = check_format(fmt, env=environment())
    window = _grace(grace)
    gates = _fail_on(fail_on)
    key = _envelope_key(envelope_key)
    one_thread = thread is not None or tenant is not None or sub_tenant is not None or session is not None
    if by_thread and one_thread:
        raise UsageError("--by-thread reports every thread; leave out --thread/--tenant/--session")
    env = environment()
    request = cc.CompatRequest(
        envelope_key=key, current_format=current_format, grace=window, now=datetime.now(timezone.utc),
        mode=cc.THREAD if one_thread else cc.BY_THREAD if by_thread else cc.STORE,
    )
    with open_for_reading(store, environment=env) as st:
        if one_thread:
            request.thread = single_thread_key(thread, tenant, sub_tenant, session)
            require_thread(st, request.thread)
        outcome = cc.run_report(st, request)
        if outcome.mode == cc.THREAD:
            _write_report(outcome.report, cc.thread_pairs, out_format, outcome.report.key, env)
        elif outcome.mode == cc.BY_THREAD:
            records = (cc.thread_row(rep) if out_format in ("table", "text") else rep.to_json() for rep in outcome.reports or ())
            render.write_records(records, fmt=out_format, columns=cc.BY_THREAD_COLUMNS, title=st.location.display, environment=env)
        else:
            rep = outcome.report
            _write_report(rep, cc.store_pairs, out_format, st.location.display, env)
            if rep.suggestion:
                other, n = rep.suggestion
                env.stderr.write(
                    render.escape_inline(f"symfonic: hint: nothing under '{key}', but {n} checkpoints carry an envelope "
                                         f"under '{other}'; pass --envelope-key {other}") + "\n"
                )
    findings = outcome.findings
    hit = failed(findings, gates)
    if hit:
        raise FindingsError(f"compat report: findings named by --fail-on present ({_named(outcome, hit)})")


def _named(outcome, hit: list[str]) -> str:
    """Each finding's checkpoints, and where the report knows them its threads (the first one)
    and releases: the one line an alert shows should say where to look."""
    from symfonic_cli import render
    from symfonic_cli.compat import command as cc

    findings = outcome.findings
    if outcome.mode == cc.THREAD:
        return render.escape_inline(", ".join(f"{f}: {findings[f]} checkpoint(s)" for f in hit) + f" in thread '{outcome.report.key}'")
    if outcome.mode != cc.STORE:
        return ", ".join(f"{f}: {findings[f]} checkpoint(s)" for f in hit)
    from symfonic_cli.compat.releases import release_text

    parts = []
    for f in hit:
        text = f"{f}: {findings[f]} checkpoint(s)"
        found = outcome.report.releases.label_json((f, None))
        if found["threads"]:
            releases = [release_text(r["package_version"]) for r in found["package_versions"]]
            text += f" in {found['threads']} thread(s), first '{found['first_threads'][0]}'"
            if releases:
                text += f", written by {', '.join(releases[:3])}{', ...' if len(releases) > 3 else ''}"
        parts.append(text)
    return render.escape_inline("; ".join(parts))


@app.command("show")
def show(
    key: KeyArg = None,
    store: StoreOpt = None,
    thread: ThreadOpt = None,
    tenant: TenantOpt = None,
    sub_tenant: SubTenantOpt = None,
    session: SessionOpt = None,
    checkpoint: Annotated[Optional[str], typer.Option("--checkpoint", help="Show this checkpoint in full.")] = None,
    current_format: CurrentFormatOpt = CURRENT_FORMAT,
    envelope_key: EnvelopeKeyOpt = DEFAULT_ENVELOPE_KEY,
    fmt: FormatOpt = None,
) -> None:
    """Every checkpoint of a thread, newest first, with its envelope verdict (or one in full)."""
    thread = with_key(key, thread)
    from symfonic_cli import render
    from symfonic_cli.compat import command as cc

    out_format = check_format(fmt, env=environment())
    key = _envelope_key(envelope_key)
    tkey = single_thread_key(thread, tenant, sub_tenant, session)
    env = environment()
    out = env.stdout
    with open_for_reading(store, environment=env) as st:
        require_thread(st, tkey)
        found = cc.checkpoint_verdicts(st, tkey, envelope_key=key, current_format=current_format, checkpoint=checkpoint)
        if checkpoint is not None:
            rec = found.to_json(full=True)
            if out_format in ("table", "text"):
                render.write_pairs([(k, _cell(v)) for k, v in rec.items()], fmt=out_format, title=tkey, environment=env)
            else:
                out.write(render.json_dumps(rec, indent=2 if out_format == "json" else None) + "\n")
            return
        render.write_records((v.to_json() for v in found), fmt=out_format, columns=cc.CHECKPOINT_COLUMNS, title=tkey, environment=env)


def _cell(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        from symfonic_cli.render import json_dumps

        return json_dumps(value)
    return value


def _write_report(rep, pairs_of, out_format: str, title: str, env: Environment) -> None:
    """A store or thread report: its JSON document, or its pairs as a table."""
    from symfonic_cli import render

    if out_format in ("json", "jsonl"):
        env.stdout.write(render.json_dumps(rep.to_json(), indent=2 if out_format == "json" else None) + "\n")
        return
    pairs = list(pairs_of(rep, env))
    render.write_pairs(pairs, fmt=out_format, title=title, environment=env, styles=_finding_styles(rep, pairs))


def _finding_styles(rep, pairs: list[tuple[str, Any]]) -> list[str]:
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


def _grace(text):
    from symfonic_cli.clock import parse_duration  # here: TAB and --help load this module

    return parse_duration(text, option="--grace", bare_unit="m")
