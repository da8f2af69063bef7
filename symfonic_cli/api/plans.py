"""Plan first, then execute: ``plan_erase``, ``plan_prune``, ``plan_export``, ``plan_migrate`` and ``plan_rewind``
return a ``Plan`` (changes/result.py: typed, inspectable, the dry run's document) and change nothing;
``execute(plan, yes=...)`` runs it and returns the operation's ``RunResult``.

A plan function takes what its operation takes (``erase``'s arguments but ``dry_run`` and ``yes``,
and so on: the same declared parameters) and checks them as it does; the request is made once, by
the operation's own planning (api/front.py), planned, and kept by the plan. ``execute`` runs that request on exactly the planned
threads: a thread that appeared under the selection after the plan is not touched (a retention
sweep keeps its cut-off, fixed when planned, and re-checks each thread's activity). Each thread is
planned again inside its own transaction, as the commands do, so what changed meanwhile is judged
on what is there then. Confirmation is the caller's: a real erase or prune needs ``yes=True``
(without it ``NotConfirmedError``, exit 6, nothing changed), as the commands without a terminal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from symfonic_cli.api.arguments import checked
from symfonic_cli.changes.result import Plan, RunResult  # at run time: annotations are read (api/arguments.py)
from symfonic_cli.errors import UsageError

__all__ = ["Plan", "execute", "plan_erase", "plan_export", "plan_migrate", "plan_prune", "plan_rewind"]


def _no_run(choices: dict[str, Any], operation: str) -> None:
    for name in ("dry_run", "yes"):
        if name in choices:
            raise UsageError(f"plan_{operation} takes no {name}: a plan changes nothing; execute(plan, yes=True) runs it")


def _bound(fn: Callable[..., Plan]) -> Callable[..., Plan]:
    """Arguments that do not bind (a missing store, a store given twice) are a UsageError, as
    everywhere in the API (the choices themselves are checked by the operation)."""
    import functools
    import inspect

    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Plan:
        try:
            signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise UsageError(f"{fn.__name__}: {exc}") from None
        return fn(*args, **kwargs)

    return wrapper


@_bound
def plan_erase(store: Any, /, **choices: Any) -> Plan:
    """``erase``'s plan (``thread erase --dry-run -f json``): each thread's rows, first and last
    activity, whether it is recent, the not-found keys; ``summary`` counts them."""
    from symfonic_cli.api.changes import planner

    _no_run(choices, "erase")
    return planner("erase")(store, **choices)


@_bound
def plan_prune(store: Any, /, **choices: Any) -> Plan:
    """``prune``'s plan (``thread prune --dry-run -f json``): per thread the checkpoints and bytes
    that go, the messages whose time moves and those held only in what goes; ``summary`` totals them."""
    from symfonic_cli.api.changes import planner

    _no_run(choices, "prune")
    return planner("prune")(store, **choices)


@_bound
def plan_export(store: Any, output: Any, /, **choices: Any) -> Plan:
    """``export``'s plan: the output checked (it exists and ``force`` is not given: exit 2), the
    threads it would write with their checkpoints and activity, the requested keys not found."""
    from symfonic_cli.api.changes import planner

    _no_run(choices, "export")
    return planner("export")(store, output, **choices)


@_bound
def plan_migrate(source: Any, target: Any, /, **choices: Any) -> Plan:
    """``migrate``'s plan (``migrate --dry-run -f json``): per thread copy, skip or conflict."""
    from symfonic_cli.api.changes import planner

    _no_run(choices, "migrate")
    return planner("migrate")(source, target, **choices)


@_bound
def plan_rewind(store: Any, /, *args: Any, **choices: Any) -> Plan:
    """``rewind``'s plan (``thread rewind --dry-run -f json``): the target checkpoint (id, age, step,
    writer), the conversation after it, what runs next, the branch left behind and the undo
    command. ``execute`` writes a copy of exactly that checkpoint, and only while the thread's
    newest checkpoint is still the one planned (else HeadMoved, exit 13, nothing written)."""
    from symfonic_cli.api.changes import planner

    _no_run(choices, "rewind")
    return planner("rewind")(store, *args, **choices)


@checked
def execute(plan: Plan, *, yes: bool = False, on_thread: Callable[[Any], None] | None = None) -> RunResult:
    """Run ``plan`` on its threads; the operation's RunResult (an error that ends the run raises,
    carrying it as ``.result``, as the operation does). ``on_thread`` (an erase or a prune): called
    with each thread as it is done (changes/report.ThreadDone)."""
    from symfonic_cli.api.changes import _api_front, _environment, collected

    if not isinstance(plan, Plan) or plan.request is None:
        raise UsageError("execute takes a plan from plan_erase, plan_prune, plan_export, plan_migrate or plan_rewind")
    request = _pinned(plan, yes)
    if plan.operation == "migrate":
        return plan.runner(request, _environment())
    front = _api_front(plan.operation, {}, on_thread)
    return collected(plan.operation, front, lambda: plan.runner(request, front.environment, front.report))


def _pinned(plan: Plan, yes: bool) -> Any:
    """The plan's request for the real run, on the planned threads only."""
    req, keys = plan.request, list(plan.thread_keys)
    if plan.operation == "migrate":
        return req.replace(dry_run=False, selection_options={"threads": keys} if keys else req.selection_options)
    if plan.operation == "export":
        return req.replace(keys=keys, prefix=None, window=None)
    if plan.operation == "rewind":  # the planned checkpoint, on the planned head only
        planned = plan.document["threads"][0]
        return req.replace(to=planned["target"]["checkpoint_id"], before_message=None, expected_head=planned["head"]["checkpoint_id"],
                           dry_run=False, yes=yes)
    sel = req.selection
    if plan.operation == "erase" and sel.window is not None:
        return req.replace(dry_run=False, yes=yes)  # a sweep: its cut-off fixed, re-checked per thread
    pinned = replace(sel, keys=tuple(keys), prefix=None, session=None, window=None, every_thread=False)
    return req.replace(selection=pinned, dry_run=False, yes=yes)

