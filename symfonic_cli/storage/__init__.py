"""Store growth: ``store usage`` (where the bytes are) and ``thread prune`` (old checkpoints removed safely)."""
