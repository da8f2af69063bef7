"""What the agent recalls after a restart (resume window) and every message the store holds (held)."""
