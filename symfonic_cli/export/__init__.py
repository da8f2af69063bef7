"""``symfonic thread export``: a data subject's conversations as a bundle (GDPR Art. 15 and 20)."""
