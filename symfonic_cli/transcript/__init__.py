"""transcript show: rows with get_transcript's semantics, and their timestamps."""
