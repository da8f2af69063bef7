"""Decoding stored values: the strict serializer, msgpack heads, per-thread reuse."""
