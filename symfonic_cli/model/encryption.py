"""How much of a store LangGraph's EncryptedSerializer wrote: ``store info`` and ``compat report``.

LangGraph reads a row whose type has no ``+<cipher>`` as plaintext even in an encrypted store,
unauthenticated (langgraph #8938): such rows in an encrypted store are a finding.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EncryptionCensus:
    encrypted: int  # stored values (checkpoints, blobs, writes) typed "<inner>+<cipher>"
    plain: int  # the other serialized values
    first_plain: tuple[str, ...] = ()  # the first checkpoint ids holding a plain value (encrypted stores only)

    def describe(self) -> str:
        if not self.encrypted:
            return "not encrypted"
        return f"encrypted (LangGraph EncryptedSerializer, AES): {self.encrypted} values"

    @property
    def plaintext(self) -> int:
        """Plain values in an encrypted store (0 when the store is not encrypted)."""
        return self.plain if self.encrypted else 0

    def finding(self) -> str | None:
        if not self.plaintext:
            return None
        return (f"{self.plaintext} plaintext values in an encrypted store (LangGraph reads them unauthenticated); "
                f"first checkpoints: {', '.join(self.first_plain)}")
