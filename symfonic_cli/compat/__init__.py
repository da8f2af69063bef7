"""compat report / compat show: the envelope contract and the reports built on it."""
