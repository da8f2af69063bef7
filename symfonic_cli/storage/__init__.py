"""Store growth: ``store usage`` (where the bytes are; ``thread prune`` is prune/)."""
