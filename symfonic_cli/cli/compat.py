"""``symfonic compat report|show``: the compatibility envelopes of a store, read-only.

Only checkpoint metadata is read; nothing is ever stamped, repaired or moved.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any, Optional

import typer

from symfonic_cli.cli.common import (
    MAX_FORMAT_VERSION,
    check_format,
    open_for_reading,
    require_thread,
)
from symfonic_cli.cli.options import (
    SessionOpt,
    StoreOpt,
    SubTenantOpt,
    TenantOpt,
    ThreadOpt,
)
from symfonic_cli.compat.envelope import (
    CURRENT_FORMAT,
    DEFAULT_ENVELOPE_KEY,
    ENVELOPE_KEY_ENV,
)
from symfonic_cli.errors import FindingsError, NotFoundError, UsageError
from symfonic_cli.inputs import parse_duration
from symfonic_cli.selection import one_thread as single_thread_key

app = typer.Typer(help="Report on the compatibility envelopes of a store (read-only).", no_args_is_help=True)

FORMATS = ("table", "json", "jsonl")

EnvelopeKeyOpt = Annotated[
    str,
    typer.Option("--envelope-key", envvar=ENVELOPE_KEY_ENV, show_envvar=True, help="Metadata key holding the envelope."),
]
CurrentFormatOpt = Annotated[
    int, typer.Option("--current-format", min=1, max=MAX_FORMAT_VERSION, help="Newest envelope format_version the running release understands (1 to 1000000).")
]
CompatFormatOpt = Annotated[Optional[str], typer.Option("--format", "-f", help="table, json or jsonl.", case_sensitive=False)]
GraceOpt = Annotated[
    str,
    typer.Option("--grace", help="Unfinalized writes younger than this are 'in flight', older ones 'interrupted by a crash' (e.g. 90s, 10m, 2h)."),
]
FailOnOpt = Annotated[
    str,
    typer.Option("--fail-on", help="Exit 5 when any of these findings is present: corrupt,newer,interrupted,legacy ('' for never)."),
]


def register(app_: typer.Typer) -> None:
    app_.add_typer(app, name="compat")


def _fail_on(value: str) -> tuple[str, ...]:
    from symfonic_cli.compat.report import FINDINGS

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
    store: StoreOpt = None,
    thread: ThreadOpt = None,
    tenant: TenantOpt = None,
    sub_tenant: SubTenantOpt = None,
    session: SessionOpt = None,
    by_thread: Annotated[bool, typer.Option("--by-thread", help="One report per thread, for every thread.")] = False,
    grace: GraceOpt = "10m",
    current_format: CurrentFormatOpt = CURRENT_FORMAT,
    envelope_key: EnvelopeKeyOpt = DEFAULT_ENVELOPE_KEY,
    fmt: CompatFormatOpt = None,
    fail_on: FailOnOpt = "corrupt,newer",
) -> None:
    """Store-wide (default), one thread (--thread / --tenant --session) or every thread (--by-thread)."""
    from datetime import datetime, timezone

    from symfonic_cli.compat import report as cr

    out_format = check_format(fmt, FORMATS)
    window = parse_duration(grace)
    gates = _fail_on(fail_on)
    key = _envelope_key(envelope_key)
    one_thread = thread is not None or tenant is not None or sub_tenant is not None or session is not None
    if by_thread and one_thread:
        raise UsageError("--by-thread reports every thread; leave out --thread/--tenant/--session")
    now = datetime.now(timezone.utc)
    kwargs: dict[str, Any] = {"key": key, "current_format": current_format, "now": now, "grace": window}

    with open_for_reading(store) as st:
        if one_thread:
            tkey = single_thread_key(thread, tenant, sub_tenant, session)
            require_thread(st, tkey)
            rep = cr.thread_report(tkey, st.iter_envelopes(key, thread=tkey), **kwargs)
            _write_thread(rep, out_format)
            findings = rep.findings()
        elif by_thread:
            from symfonic_cli import render

            findings = {f: 0 for f in cr.FINDINGS}

            def records():
                # One thread in memory at a time; the findings are tallied as the rows stream.
                for rep in cr.thread_reports(st.iter_envelopes(key), **kwargs):
                    for f, n in rep.findings().items():
                        findings[f] += n
                    yield rep.to_json() if out_format != "table" else _thread_row(rep)

            render.write_records(records(), fmt=out_format, columns=BY_THREAD_COLUMNS, title=st.location.display)
        else:
            rep = cr.store_report(
                st.envelope_shapes(key, older_than=cr.id_at(now - window)), key=key, current_format=current_format
            )
            if cr.wants_key_suggestion(rep):
                found = st.envelope_key_candidates(key, limit=1)
                rep.suggestion = found[0] if found else None
            _write_store(rep, out_format, st.location.display)
            if rep.suggestion:
                from symfonic_cli.render import escape_inline

                other, n = rep.suggestion
                sys.stderr.write(
                    escape_inline(f"symfonic: hint: nothing under '{key}', but {n} checkpoints carry an envelope "
                                  f"under '{other}'; pass --envelope-key {other}") + "\n"
                )
            findings = rep.findings()
    hit = cr.failed(findings, gates)
    if hit:
        counts = ", ".join(f"{f}: {findings[f]}" for f in hit)
        raise FindingsError(f"compat report: findings named by --fail-on present ({counts})")


@app.command("show")
def show(
    store: StoreOpt = None,
    thread: ThreadOpt = None,
    tenant: TenantOpt = None,
    sub_tenant: SubTenantOpt = None,
    session: SessionOpt = None,
    checkpoint: Annotated[Optional[str], typer.Option("--checkpoint", help="Show this checkpoint in full.")] = None,
    current_format: CurrentFormatOpt = CURRENT_FORMAT,
    envelope_key: EnvelopeKeyOpt = DEFAULT_ENVELOPE_KEY,
    fmt: CompatFormatOpt = None,
) -> None:
    """Every checkpoint of a thread, newest first, with its envelope verdict (or one in full)."""
    from symfonic_cli import render
    from symfonic_cli.compat import report as cr

    out_format = check_format(fmt, FORMATS)
    key = _envelope_key(envelope_key)
    tkey = single_thread_key(thread, tenant, sub_tenant, session)
    with open_for_reading(store) as st:
        require_thread(st, tkey)
        verdicts = cr.verdicts(st.iter_envelopes(key, thread=tkey), key=key, current_format=current_format)
        if checkpoint is not None:
            found = next((v for v in verdicts if v.row.checkpoint_id == checkpoint), None)
            if found is None:
                raise NotFoundError(f"no checkpoint '{checkpoint}' in thread '{tkey}'")
            rec = found.to_json(full=True)
            if out_format == "table":
                render.write_pairs([(k, _cell(v)) for k, v in rec.items()], fmt="table", title=tkey)
            else:
                sys.stdout.write(render.json_dumps(rec, indent=2 if out_format == "json" else None) + "\n")
            return
        columns = ("checkpoint_id", "checkpoint_ns", "step", "source", "ts", "status", "writer_line",
                   "format_version", "safe_boundary", "finalized", "note")
        render.write_records((v.to_json() for v in verdicts), fmt=out_format, columns=columns, title=tkey)


def _cell(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        from symfonic_cli.render import json_dumps

        return json_dumps(value)
    return value


# -- output


def _write_store(rep, out_format: str, title: str) -> None:
    from symfonic_cli import render

    data = rep.to_json()
    if out_format in ("json", "jsonl"):
        sys.stdout.write(render.json_dumps(data, indent=2 if out_format == "json" else None) + "\n")
        return
    verdict = data["verdict"]
    pairs: list[tuple[str, Any]] = [
        ("envelope key", rep.envelope_key),
        ("understood formats", f"0..{rep.current_format}"),
        ("checkpoints", rep.checkpoints),
        ("threads", rep.threads),
    ]
    for row in data["by_writer_line"]:
        pairs.append((f"checkpoints {row['writer_line']} v{row['format_version']}", row["checkpoints"]))
    for row in data["corrupt"]:
        pairs.append((f"corrupt: {row['reason']}", row["checkpoints"]))
    for row in data["newer"]:
        pairs.append((f"newer: format_version {row['format_version']}", row["checkpoints"]))
    for status, n in data["latest_checkpoint_of_threads"].items():
        pairs.append((f"threads whose latest checkpoint is {status}", n))
    for row in data["anomalies"]:
        pairs.append((f"anomaly: {row['anomaly']}", row["checkpoints"]))
    pairs.append(("unfinalized in flight", rep.in_flight))
    pairs.append(("unfinalized interrupted by a crash", rep.interrupted))
    pairs.append(("migrated services can read all", "yes" if verdict["migrated_can_read_all"] else "NO"))
    pairs.append(("rollback to legacy can read all", "yes" if verdict["legacy_can_read_all"] else "NO"))
    if rep.suggestion:
        other, n = rep.suggestion
        pairs.append(
            ("suggestion", f"no envelope under '{rep.envelope_key}', but {n} checkpoints carry one under "
                           f"'{other}': pass --envelope-key {other}")
        )
    render.write_pairs([(render.escape_inline(k), v) for k, v in pairs], fmt="table", title=title)


def _write_thread(rep, out_format: str) -> None:
    from symfonic_cli import render

    data = rep.to_json()
    if out_format in ("json", "jsonl"):
        sys.stdout.write(render.json_dumps(data, indent=2 if out_format == "json" else None) + "\n")
        return
    latest = data["latest"] or {}
    b = data["safe_boundary"]
    pairs: list[tuple[str, Any]] = [
        ("checkpoints", rep.checkpoints),
        *((f"checkpoints {s}", n) for s, n in data["by_status"].items()),
        ("latest checkpoint", latest.get("checkpoint_id")),
        ("latest status", latest.get("status")),
        ("latest writer line", latest.get("writer_line")),
        ("latest format version", latest.get("format_version")),
        ("readable by legacy", latest.get("readable_by_legacy")),
        ("readable by migrated", latest.get("readable_by_migrated")),
        ("reason", latest.get("reason")),
        ("latest safe boundary", None if b is None else f"{b['boundary_id']} (sequence {b['boundary_sequence']}) "
                                                        f"at checkpoint {b['checkpoint_id']}, {b['ts']}"),
        ("safe boundaries", data["safe_boundaries"]),
    ]
    for u in data["unfinalized"]:
        pairs.append((f"unfinalized {u['checkpoint_id']}", f"{u['state']} ({u['ts']})"))
    for c in data["corrupt"]:
        pairs.append((f"{c['checkpoint_id']}", c["reason"]))
    for a in data["anomalies"]:
        pairs.append((f"anomaly {a['checkpoint_id']}", a["anomaly"]))
    render.write_pairs([(render.escape_inline(k), v) for k, v in pairs], fmt="table", title=rep.key)


BY_THREAD_COLUMNS = ("thread", "checkpoints", "latest_status", "writer_line", "format_version",
                     "safe_boundary", "in_flight", "interrupted", "corrupt", "newer")


def _thread_row(rep) -> dict[str, Any]:
    data = rep.to_json()
    latest = data["latest"] or {}
    b = data["safe_boundary"]
    findings = data["findings"]
    return {
        "thread": rep.key,
        "checkpoints": rep.checkpoints,
        "latest_status": latest.get("status"),
        "writer_line": latest.get("writer_line"),
        "format_version": latest.get("format_version"),
        "safe_boundary": None if b is None else f"{b['boundary_id'] or '(no id)'} @ {b['checkpoint_id']}",
        "in_flight": len(data["unfinalized"]) - findings["interrupted"],
        "interrupted": findings["interrupted"],
        "corrupt": findings["corrupt"],
        "newer": findings["newer"],
    }
