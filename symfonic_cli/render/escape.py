"""Escaping for output: control characters, one-line cells, and JSON that keeps content exact.

Table and text output never interpret rich markup and show control characters escaped, so
stored content cannot recolour, retitle or take over the reader's terminal. JSON keeps the
exact content (control characters as JSON escapes).
"""

from __future__ import annotations

import functools
import json
import re
from datetime import datetime

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

# Bidirectional formatting characters reorder what a reader sees ("Trojan Source").
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# Format characters (Unicode category Cf, bidi ones among them) draw nothing: zero-width space and
# joiners, word joiner, the byte order mark U+FEFF, soft hyphen, and the tag characters U+E0000 to
# U+E007F that spell hidden ASCII text an assistant reads and a person does not see.
_FORMAT = ("\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
           "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
           "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e007f")
# Printable to str.isprintable() yet blank or invisible: combining grapheme joiner, Hangul
# fillers, Khmer inherent vowels, Mongolian and other variation selectors, braille blank.
_INVISIBLE = frozenset(
    "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u2800\u3164\uffa0"
    + "".join(map(chr, range(0xFE00, 0xFE10)))
    + "".join(map(chr, range(0xE0100, 0xE01F0)))
)
# What a message's text shows escaped (escape_controls), one rule for the terminal, the browser,
# CSV and the MCP server: C0 controls except tab and newline, DEL, C1 controls, the format
# characters, the invisible ones above, line and paragraph separators, and lone surrogates (UTF-8
# cannot write them).
_CONTROL = ("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029" + _FORMAT + "".join(sorted(_INVISIBLE))
            + "\ud800-\udfff]")
# Kept where they join two visible characters, which they shape: a zero-width (non-)joiner inside
# a word (Persian, Indic scripts) or an emoji sequence, an emoji or text presentation selector
# right after its character. Anywhere else they hide something, and are escaped.
_JOINERS = frozenset("\u200c\u200d")
_PRESENTATION = frozenset("\ufe0e\ufe0f")
# Kept exact in JSON, but as escapes: line and paragraph separators, C1 and bidi characters, and
# lone surrogates (a stored "\ud800" decodes to one; UTF-8 cannot encode it, JSON can escape it).
_JSON_UNSAFE = f"[\x7f-\x9f\u2028\u2029{_BIDI}\ud800-\udfff]"


@functools.cache
def _regex(pattern: str) -> re.Pattern:
    # Compiled on first use: a quick listing in JSON never needs them.
    return re.compile(pattern)


def shows_as_is(text: str) -> bool:
    """Whether ``escape_controls`` leaves ``text`` as it is, for certain (checked in C); False:
    it may escape something."""
    return text.isprintable() and (text.isascii() or _INVISIBLE.isdisjoint(text))


def escape_controls(text: str) -> str:
    """A message's text as shown: every character of ``_CONTROL`` as ``\\xNN``, ``\\uNNNN`` or
    ``\\UNNNNNNNN``, but for the joiners and presentation selectors that shape visible text;
    newlines and tabs kept."""
    if shows_as_is(text):
        return text
    return _regex(_CONTROL).sub(_escape_control, text)


def _visible(char: str) -> bool:
    return char.isprintable() and not char.isspace() and char not in _INVISIBLE


def _shapes(text: str, at: int) -> bool:
    """Whether the joiner or presentation selector at ``at`` shapes visible text (see _JOINERS)."""
    before = text[at - 1] if at else ""
    if before in _PRESENTATION:  # an emoji with its selector, then a joiner (U+2764 U+FE0F U+200D ...)
        before = text[at - 2] if at > 1 and text[at] in _JOINERS else ""
    if not (before and _visible(before)):
        return False
    return text[at] in _PRESENTATION or (at + 1 < len(text) and _visible(text[at + 1]))


def _escape_control(match: re.Match) -> str:
    char = match.group()
    if (char in _JOINERS or char in _PRESENTATION) and _shapes(match.string, match.start()):
        return char
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


_INLINE_SHORT = {"\n": "\\n", "\t": "\\t", "\\": "\\\\"}


def escape_inline(text: str) -> str:
    """For one-line cells and keys: every character that is not plainly visible as itself is shown
    as an escape, so two different strings never print the same.

    Newline and tab become ``\\n`` and ``\\t``, a backslash ``\\\\``; controls up to U+00FF
    ``\\xNN``; every other character that is not printable (format, bidi, line and paragraph
    separators, whitespace other than the ASCII space: NBSP, U+2028, U+200B, U+FEFF, ...) and
    the invisible ones above ``\\uNNNN`` (``\\UNNNNNNNN`` beyond the BMP).
    """
    if text.isprintable() and "\\" not in text and (text.isascii() or _INVISIBLE.isdisjoint(text)):
        return text  # the common case, checked in C
    return _regex("[^ -\\[\\]-~]").sub(_escape_inline_char, text)


def _escape_inline_char(match: re.Match) -> str:
    char = match.group()
    short = _INLINE_SHORT.get(char)
    if short is not None:
        return short
    if char.isprintable() and char not in _INVISIBLE:
        return char
    code = ord(char)
    if code < 0x20 or 0x7F <= code <= 0x9F:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


# Characters escaped in JSON shown to a reader (``json_dumps(..., visible=True)``): what
# escape_inline escapes beyond the controls json_dumps escapes already.
def _escape_json_visible(match: re.Match) -> str:
    char = match.group()
    if char.isprintable() and char not in _INVISIBLE:
        return char
    code = ord(char)
    if code > 0xFFFF:  # JSON escapes astral characters as a surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        from symfonic_cli.clock import iso_z

        return iso_z(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    return str(value)


def json_value(value: Any) -> Any:
    """The value ``json.loads(json_dumps(value))`` gives, made without the text: what a library
    caller (the Python API) gets where the command line prints JSON."""
    kind = type(value)
    if value is None or kind is str or kind is int or kind is bool or kind is float:
        return value
    if isinstance(value, dict):
        return {_json_key(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, (str, int, float)):  # subclasses (an IntEnum) are written as their value
        return json.loads(json.dumps(value))
    return json_value(_json_default(value))


def _json_key(key: Any) -> str:
    # json.dumps writes an int, float, bool or None key as its JSON text (1 -> "1", None -> "null").
    return str(key) if isinstance(key, str) else json.dumps(key)


# One encoder for every compact dump: json.dumps with options builds a new one per call.
_COMPACT = json.JSONEncoder(ensure_ascii=False, default=_json_default)


def _escape_json_unsafe(match: re.Match) -> str:
    return f"\\u{ord(match.group()):04x}"


def _json_safe(out: str) -> str:
    if out.isascii() and "\x7f" not in out:  # the common case, checked in C
        return out
    return _regex(_JSON_UNSAFE).sub(_escape_json_unsafe, out)


def json_dumps(value: Any, *, indent: int | None = None, visible: bool = False) -> str:
    """JSON text. ``visible``: for a reader's terminal, also every invisible or blank-looking
    character as a ``\\u`` escape (the same JSON value, so it parses to the same strings)."""
    try:
        if indent is None:
            out = _COMPACT.encode(value)
        else:
            out = json.dumps(value, ensure_ascii=False, indent=indent, default=_json_default)
    except (ValueError, RecursionError):
        # A stored value at the limits (symfonic_cli/codec/metadata_json.py): a long integer, deep nesting.
        from symfonic_cli.codec.metadata_json import deep, int_digits

        with int_digits(), deep():
            out = json.dumps(value, ensure_ascii=False, indent=indent, default=_json_default)
    out = _json_safe(out)
    return visible_json(out) if visible else out


def visible_json(out: str) -> str:
    """JSON text from ``json_dumps`` with every invisible or blank-looking character as a ``\\u``
    escape (``json_dumps(..., visible=True)`` for text already made)."""
    if out.isascii():
        return out
    return _regex("[^\\x00-\\x7f]").sub(_escape_json_visible, out)


# A flat record's value -> its JSON text, by its exact class (a bool, a float or an int subclass
# is none of these: json_dumps writes it). "null".format ignores its argument: a call in C, as
# the others are (no Python call per value).
_SCALARS = {str: json.encoder.encode_basestring, int: int.__repr__, type(None): "null".format}


class _RecordEncoder:
    """``json_dumps`` for records whose keys are exactly ``columns`` and whose values are str,
    int or None (a listing's rows), about four times faster; anything else goes to json_dumps.
    The text is the same, byte for byte (tests/threads/test_listing.py compares them)."""

    def __init__(self, columns: Sequence[str]) -> None:
        self.columns = tuple(columns)
        keys = [json.encoder.encode_basestring(c).replace("%", "%%") for c in self.columns]
        self.template = "{" + ", ".join(f"{k}: %s" for k in keys) + "}"

    def dumps(self, rec: dict[str, Any]) -> str:
        if tuple(rec) == self.columns:
            try:
                return _json_safe(self.template % tuple([_SCALARS[type(v)](v) for v in rec.values()]))
            except KeyError:  # a value of another class
                pass
        return json_dumps(rec)


def cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, datetime):
        from symfonic_cli.clock import iso_z

        return iso_z(value)
    if value is True or value is False:  # yes/no in tables and text; true/false in JSON
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):  # a JSON list; one line in a table
        return ", ".join(cell(v) for v in value)
    try:
        text = str(value)
    except (ValueError, RecursionError):  # a long integer or deep nesting (metadata_json limits)
        from symfonic_cli.codec.metadata_json import deep, int_digits

        with int_digits(), deep():
            text = str(value)
    return escape_inline(text)
