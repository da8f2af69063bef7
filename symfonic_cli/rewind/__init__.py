"""thread rewind: continue a conversation from an earlier checkpoint, as LangGraph's time travel does."""
