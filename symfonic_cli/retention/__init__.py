"""Retention (GDPR Art. 5(1)(e)): which threads are idle, read from their checkpoint ids."""
