"""symfonic: safe, read-only-by-default tools for symfonic-core checkpoint stores."""

__version__ = "0.1.0"
