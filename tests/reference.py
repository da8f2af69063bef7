"""The reference: symfonic-core's own ``get_transcript``, run over a real async saver.

``SymfonicAgent.get_transcript`` is called unbound on a minimal host object that carries exactly
the attributes it reads (the checkpointer and the two helper methods), so the code under
comparison is symfonic-core's own, unmodified.
"""

from __future__ import annotations

import asyncio
from datetime import timezone
from types import SimpleNamespace


def reference_transcript(db_path, tenant, sub_tenant, session, **kwargs) -> list[dict]:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from symfonic.agent.engine import SymfonicAgent

    async def go():
        async with AsyncSqliteSaver.from_conn_string(str(db_path)) as saver:
            host = SimpleNamespace(_checkpointer=saver)

            async def ready():
                return None

            host._ensure_checkpointer_ready = ready
            host._thread_id_for = SymfonicAgent._thread_id_for
            host._checkpoint_ts_by_message_id = lambda config: SymfonicAgent._checkpoint_ts_by_message_id(host, config)
            scope = SimpleNamespace(tenant_id=tenant, sub_tenant_id=sub_tenant)
            rows = await SymfonicAgent.get_transcript(host, scope, session, **kwargs)
            return [
                {
                    "index": r.index,
                    "role": r.role,
                    "content": r.content,
                    "message_id": r.message_id,
                    # symfonic prints every time in UTC with Z (README "At the terminal"): the same instant.
                    "timestamp": r.timestamp.astimezone(timezone.utc).isoformat().replace("+00:00", "Z") if r.timestamp else None,
                }
                for r in rows
            ]

    return asyncio.run(go())
