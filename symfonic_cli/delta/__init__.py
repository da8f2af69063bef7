"""LangGraph DeltaChannel values rebuilt from the store."""
