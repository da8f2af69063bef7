"""Which threads a command works on: one resolver for transcript, thread show/history/diff, erase,
export, prune and migrate, the command line's and the Python API's alike (``choose``).

A ``Selection`` is either explicit keys (``--thread``, ``--tenant --sub-tenant --session``,
``--from-file``) or a tenant prefix (``--tenant [--sub-tenant] --all-sessions``, migrate's
``--tenant`` alone) or every thread (migrate's ``--all``). For erase and export, one person's
session across sub-tenants (``--tenant T --session S``: S under every sub-tenant of T) or across
tenants (``--session S`` alone) becomes explicit keys once the store is read (``with_sessions``),
so its plan lists every match before anything happens, as a key file's would. ``build_selection`` checks the options the way each command has always
checked them (usage errors, exit 2) and records what was asked in ``receipt`` for erase receipts.
A thread key is an exact string: nothing here trims or folds one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from symfonic_cli.environment import Environment
from symfonic_cli.errors import UsageError
from symfonic_cli.threadkey import derive_key, tenant_prefix

if TYPE_CHECKING:
    from symfonic_cli.stores.protocol import Store

# The commands' option rules: one thread (transcript show, thread show/history/diff), erase and
# export, prune (erase's and --all), migrate.
ONE, ERASE, PRUNE, MIGRATE = "one", "erase", "prune", "migrate"


@dataclass(frozen=True)
class Selection:
    keys: tuple[str, ...] | None = None  # explicit keys, in the order given, without repeats
    tenant: str | None = None  # a whole tenant (keys is None)
    sub_tenant: str | None = None
    prefix: str | None = None  # the key prefix of that tenant (or tenant and sub-tenant)
    every_thread: bool = False  # migrate --all
    from_stdin: bool = False  # the keys came from standard input ('--from-file -')
    receipt: dict = field(default_factory=dict)  # what was asked, as erase receipts record it
    # A retention sweep (--inactive-for/--inactive-since): the activity window, its cut-off fixed
    # once (retention/window.py ActivityWindow); only threads whose last checkpoint is older are
    # selected, and erase re-checks each inside its transaction. None: no age condition.
    window: Any = None
    # --session S (and --tenant T) without --sub-tenant, for erase and export: keys is () until
    # with_sessions(store) finds the matching threads (unresolved, it selects nothing).
    session: str | None = None

    @property
    def inactive_before(self) -> datetime | None:
        return self.window.inactive_before if self.window is not None else None

    @property
    def key(self) -> str:
        """The one key of a single-thread selection."""
        assert self.keys is not None and len(self.keys) == 1
        return self.keys[0]

    def with_sessions(self, store: Store, *, listed_only: bool = False) -> "Selection":
        """A session selection made explicit: every thread key of the store (checkpoints or
        writes; with ``listed_only`` those with a checkpoint, as export lists them) whose session
        part is exactly ``session``, under ``tenant`` when given, in key order; any other
        selection as it is."""
        if self.session is None:
            return self
        from dataclasses import replace

        from symfonic_cli.threadkey import parse_key

        prefix = tenant_prefix(self.tenant, None) if self.tenant is not None else ""
        keys = []
        found = sorted(t.key for t in store.list_threads(tenant=self.tenant)) if listed_only else store.thread_keys_with_prefix(prefix)
        for key in found:
            parts = parse_key(key)
            if parts is not None and parts.session == self.session and (self.tenant is None or parts.tenant == self.tenant):
                keys.append(key)
        return replace(self, keys=tuple(keys), receipt={**self.receipt, "threads": len(keys)})

    def keys_in(self, store: Store) -> list[str]:
        """The keys to work on, listing the store for a tenant or --all selection."""
        if self.keys is not None:
            return list(self.keys)
        if self.every_thread:
            return _unique([t.key for t in store.list_threads()])
        return _unique([t.key for t in store.list_threads(tenant=self.tenant, sub_tenant=self.sub_tenant)])


def _retention(threads, tenant: str | None, sub_tenant: str | None, session: str | None, all_sessions, from_file, inactive_for, inactive_since, environment: Environment | None) -> Selection:
    """A retention sweep: the threads (of a tenant, or all) idle since a cut-off fixed here, once."""
    from symfonic_cli.retention.window import window as activity_window

    if threads or session is not None or from_file is not None or all_sessions:
        raise UsageError("--inactive-for/--inactive-since go with --tenant [--sub-tenant] only")
    if sub_tenant is not None and tenant is None:
        raise UsageError("--sub-tenant needs --tenant")
    tz = environment.zone() if environment is not None else None  # --tz: a naive --inactive-since is in it
    window = activity_window(inactive_for=inactive_for, inactive_since=inactive_since, active_within=None, tz=tz)
    assert window is not None  # a sweep is asked with --inactive-for or --inactive-since
    asked = {"inactive_for": inactive_for} if inactive_for is not None else {"inactive_since": inactive_since}
    return Selection(
        tenant=tenant, sub_tenant=sub_tenant, window=window,
        receipt={**asked, "tenant": tenant, "sub_tenant": sub_tenant, "cut_off": window.describe()["inactive_before"]},
    )


def build_selection(
    command: str,
    *,
    threads: list[str] | str | None = None,
    tenant: str | None = None,
    sub_tenant: str | None = None,
    session: str | None = None,
    all_sessions: bool = False,
    from_file: str | None = None,
    all_threads: bool = False,
    inactive_for: str | None = None,
    inactive_since: str | None = None,
    environment: Environment | None = None,
) -> Selection:
    """The selection of ``command`` (ONE, ERASE or MIGRATE) from its options, or a UsageError.

    ERASE rules serve thread erase and thread export, retention sweeps (``inactive_*``) included."""
    if isinstance(threads, str):
        threads = [threads]
    threads = list(dict.fromkeys(threads)) if threads else threads  # a key given twice is one
    if inactive_for is not None or inactive_since is not None:
        return _retention(threads, tenant, sub_tenant, session, all_sessions, from_file, inactive_for, inactive_since, environment)
    if command == ONE:
        if threads and len(threads) > 1:
            raise UsageError(f"--thread given {len(threads)} times: this command reads one thread",
                             hint="give one --thread KEY; thread erase, export and prune take several")
        return Selection(keys=(_one_key(threads[0] if threads else None, tenant, sub_tenant, session),))
    if command == ERASE:
        if threads and len(threads) > 1:
            if any(v is not None for v in (tenant, sub_tenant, session, from_file)) or all_sessions:
                raise UsageError("several --thread go alone, without --tenant/--sub-tenant/--session/--from-file")
            if not all(threads):
                raise UsageError("--thread is empty")
            return key_list(threads)
        return _erase(threads[0] if threads else None, tenant, sub_tenant, session, all_sessions, from_file, environment)
    if command == MIGRATE:
        return _migrate(list(threads or []), tenant, sub_tenant, session, from_file, all_threads, environment)
    raise ValueError(f"unknown selection rules {command!r}")


def one_thread(thread: list[str] | None, tenant: str | None, sub_tenant: str | None, session: str | None) -> str:
    """``--thread KEY`` or ``--tenant T [--sub-tenant S] --session ID``, exactly one of them."""
    return build_selection(ONE, threads=thread, tenant=tenant, sub_tenant=sub_tenant, session=session).key


def _one_key(thread, tenant: str | None, sub_tenant: str | None, session: str | None) -> str:
    if thread is not None:
        if tenant is not None or sub_tenant is not None or session is not None:
            raise UsageError("give either --thread or --tenant/--sub-tenant/--session, not both")
        if not thread:
            raise UsageError("--thread is empty")
        return thread
    if tenant is None or session is None:
        raise UsageError("which thread?", hint="pass --thread KEY or --tenant T --session ID")
    if not tenant or not session:
        raise UsageError("--tenant and --session must not be empty")
    return derive_key(tenant, sub_tenant, session)


def _erase(thread, tenant: str | None, sub_tenant: str | None, session: str | None, all_sessions, from_file, environment: Environment | None) -> Selection:
    if all_sessions:
        if thread is not None or session is not None or from_file is not None:
            raise UsageError("--all-sessions goes with --tenant [--sub-tenant] only")
        if not tenant:
            raise UsageError("--all-sessions needs --tenant")
        return Selection(
            tenant=tenant, sub_tenant=sub_tenant, prefix=tenant_prefix(tenant, sub_tenant),
            receipt={"tenant": tenant, "sub_tenant": sub_tenant, "all_sessions": True},
        )
    if from_file is not None:
        if any(v is not None for v in (thread, tenant, sub_tenant, session)):
            raise UsageError("--from-file goes alone, without --thread/--tenant/--session")
        keys = _read_keys(from_file, environment)
        if not keys:
            raise UsageError(f"--from-file {from_file} holds no thread key")
        return Selection(
            keys=tuple(keys), from_stdin=from_file == "-",
            receipt={"from_file": from_file if from_file == "-" else os.path.abspath(from_file), "threads": len(keys)},
        )
    if session is not None and thread is None and sub_tenant is None:
        # One person's session under every sub-tenant of --tenant, or under every tenant.
        if not session:
            raise UsageError("--session is empty")
        if tenant is not None and not tenant:
            raise UsageError("--tenant is empty")
        return Selection(keys=(), tenant=tenant, session=session,
                         receipt={"tenant": tenant, "session": session, "every_sub_tenant": True})
    key = _one_key(thread, tenant, sub_tenant, session)
    return Selection(keys=(key,), receipt={"thread": key})


def _migrate(threads, tenant: str | None, sub_tenant: str | None, session: str | None, from_file, all_threads, environment: Environment | None) -> Selection:
    modes = [bool(threads), tenant is not None, from_file is not None, all_threads]
    if sum(modes) != 1:
        raise UsageError("choose the threads with exactly one of --thread, --tenant, --from-file, --all")
    if (sub_tenant is not None or session is not None) and tenant is None:
        raise UsageError("--sub-tenant and --session need --tenant")
    if all_threads:
        return Selection(every_thread=True, receipt={"all": True})
    if tenant is not None and session is None:
        return Selection(
            tenant=tenant, sub_tenant=sub_tenant, prefix=tenant_prefix(tenant, sub_tenant),
            receipt={"tenant": tenant, "sub_tenant": sub_tenant, "all_sessions": True},
        )
    if threads:
        keys = threads
    elif from_file is not None:
        keys = _read_keys(from_file, environment)
    else:
        assert tenant is not None and session is not None  # the one mode left: --tenant with --session
        keys = [derive_key(tenant, sub_tenant, session)]
    unique = _unique(keys)
    return Selection(keys=tuple(unique), from_stdin=from_file == "-", receipt={"threads": len(unique)})


def key_list(keys) -> Selection:
    """Explicit keys (repeated ``--thread``, the API's ``thread=[...]``), in order, each once."""
    unique = _unique(keys)
    return Selection(keys=tuple(unique), receipt={"threads": len(unique)})


def _unique(keys) -> list[str]:
    """The keys in their order, each once; an empty key is a usage error."""
    seen: set[str] = set()
    unique = []
    for k in keys:
        if not k:
            raise UsageError("an empty thread key was given")
        if k not in seen:
            seen.add(k)
            unique.append(k)
    return unique


def _read_keys(from_file: str, environment: Environment | None) -> list[str]:
    from symfonic_cli.inputs import read_key_file

    return read_key_file(from_file, environment=environment)


def choose(
    command: str,
    *,
    opener: Callable[[], Store] | None = None,
    api: bool = False,
    environment: Environment | None = None,
    missing_ok: bool = False,
    listed_only: bool = False,
    thread: str | Sequence[str] | None = None,
    tenant: str | None = None,
    sub_tenant: str | None = None,
    session: str | None = None,
    all_sessions: bool = False,
    from_file: str | None = None,
    all_threads: bool = False,
    inactive_for: str | None = None,
    inactive_since: str | None = None,
    batch_size: int | None = None,
) -> Selection:
    """The threads a changing command (ERASE: thread erase and export; PRUNE; MIGRATE) or API
    function works on, every rule in this one place: the options checked (usage errors, exit 2,
    named as the API's parameters with ``api``), a retention sweep's cut-off fixed once, and one
    session across sub-tenants or tenants made explicit keys from the store ``opener`` opens
    read-only (``listed_only``: the threads that have a checkpoint), so the plan lists every match."""
    if api and from_file == "-":
        raise UsageError("from_file '-' reads standard input; pass the keys as thread=[...]")
    others = (tenant, sub_tenant, session, from_file, inactive_for, inactive_since)
    if command == PRUNE and all_threads:
        if thread is not None or any(v is not None for v in others) or all_sessions:
            raise UsageError("all_threads goes alone, without thread/tenant/session/from_file/inactive_*" if api
                             else "--all goes alone, without --thread/--tenant/--session/--from-file/--inactive-*")
        chosen = Selection(every_thread=True, receipt={"all": True})
    elif api and command != MIGRATE and isinstance(thread, (list, tuple)):
        if any(v is not None for v in others) or all_sessions:
            raise UsageError("a list of keys goes alone, without tenant/session/from_file")
        if not thread:
            raise UsageError("thread=[] names no thread")
        chosen = key_list(thread)
    else:
        chosen = build_selection(
            ERASE if command == PRUNE else command, threads=thread if thread is None or isinstance(thread, str) else list(thread),
            tenant=tenant, sub_tenant=sub_tenant, session=session, all_sessions=all_sessions, from_file=from_file,
            all_threads=all_threads, inactive_for=inactive_for, inactive_since=inactive_since, environment=environment,
        )
    if batch_size is not None and command == PRUNE and chosen.keys is not None:
        raise UsageError("batch_size goes with all_threads, all_sessions or a retention window" if api
                         else "--batch-size goes with --all, --all-sessions or a retention window")
    if batch_size is not None and command == ERASE and chosen.window is None:
        raise UsageError("batch_size goes with a retention sweep (inactive_for/inactive_since)" if api
                         else "--batch-size goes with a retention sweep (--inactive-for/--inactive-since)")
    if chosen.session is None:
        return chosen
    if opener is None:
        raise ValueError("a session selection needs the store to read its threads from")
    return _session_keys(chosen, opener, missing_ok=missing_ok, listed_only=listed_only)


def _session_keys(
    chosen: Selection, opener: Callable[[], Store], *, missing_ok: bool, listed_only: bool,
) -> Selection:
    from dataclasses import replace

    from symfonic_cli.errors import NotFoundError
    from symfonic_cli.render import escape_inline

    assert chosen.session is not None
    with opener() as st:
        made = chosen.with_sessions(st, listed_only=listed_only)
        where = st.location.display
    if not made.keys and made.tenant is not None:
        # Nothing under any sub-tenant: the key without one is what is missing (not-found,
        # suggestions, --missing-ok), as before sessions spanned sub-tenants.
        return replace(made, keys=(derive_key(made.tenant, None, chosen.session),))
    if not made.keys and not missing_ok:
        raise NotFoundError(f"no thread of session '{escape_inline(chosen.session)}' in {escape_inline(where)}",
                            hint="--missing-ok to accept")
    return made
