"""Which threads an MCP session may see: the tenants (and sub-tenants) the operator granted.

The grant is a set of key prefixes (``tenant:`` or ``tenant:sub:``, ``threadkey.tenant_prefix``):
listings and searches pass each granted tenant to the store, whose query selects exactly the keys
starting with that prefix (byte order, never a collation; tests/erase/test_erase_exact.py); one
thread's key is compared with the prefixes as an exact string before the store is asked for it.
A key outside the grant is answered as a missing one.
"""

from __future__ import annotations

from dataclasses import dataclass

from symfonic_cli.errors import UsageError
from symfonic_cli.threadkey import NO_SUB_TENANT, tenant_prefix


@dataclass(frozen=True)
class Grant:
    tenant: str
    sub_tenant: str | None  # None: every sub-tenant; "_": threads without one

    @property
    def prefix(self) -> str:
        return tenant_prefix(self.tenant, self.sub_tenant)


@dataclass(frozen=True)
class Scope:
    grants: tuple[Grant, ...]  # empty: every tenant (--all-tenants)

    @property
    def everything(self) -> bool:
        return not self.grants

    def allows(self, key: str) -> bool:
        """Exactly the keys a scoped listing returns: those starting with a granted prefix."""
        return self.everything or any(key.startswith(g.prefix) for g in self.grants)

    def narrow(self, tenant: str | None, sub_tenant: str | None) -> list[tuple[str | None, str | None]]:
        """The (tenant, sub_tenant) filters to ask the store for, for a tool's own filters inside
        the grant; empty when they lie outside it (the answer is then empty, as for no threads)."""
        if self.everything:
            return [(tenant, sub_tenant)]
        out: list[tuple[str | None, str | None]] = []
        for g in self.grants:
            if tenant is not None and tenant != g.tenant:
                continue
            if g.sub_tenant is None:
                out.append((g.tenant, sub_tenant))
            elif sub_tenant is None or _sub(sub_tenant) == g.sub_tenant:
                out.append((g.tenant, g.sub_tenant))
        return out

    def describe(self) -> str:
        if self.everything:
            return "every tenant"
        return ", ".join(g.tenant if g.sub_tenant is None else f"{g.tenant} (sub-tenant {g.sub_tenant})" for g in self.grants)


def _sub(sub_tenant: str) -> str:
    return sub_tenant or NO_SUB_TENANT


def build_scope(tenants: list[str], sub_tenants: list[str], all_tenants: bool) -> Scope:
    """``--tenant`` (repeatable), ``--sub-tenant`` (repeatable: each granted tenant narrowed to
    those sub-tenants) or ``--all-tenants``; without either the server does not start."""
    if all_tenants and (tenants or sub_tenants):
        raise UsageError("--all-tenants grants every tenant; leave out --tenant and --sub-tenant")
    if not all_tenants and not tenants:
        raise UsageError("no tenant granted", hint="give --tenant T (repeatable), or --all-tenants to serve every tenant")
    if sub_tenants and not tenants:
        raise UsageError("--sub-tenant needs --tenant")
    for option, values in (("--tenant", tenants), ("--sub-tenant", sub_tenants)):
        for value in values:
            if not value or ":" in value:
                raise UsageError(f"{option} '{value}' is not a {option[2:]} id", hint="a non-empty id without ':'")
    subs: list[str | None] = list(dict.fromkeys(sub_tenants)) or [None]
    grants = tuple(dict.fromkeys(Grant(t, s) for t in tenants for s in subs))
    return Scope(grants)
