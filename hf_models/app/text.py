"""What the app puts on the page is printable: a model's output is bytes it chose (byte-level BPE decodes any byte,
a backspace or an escape included), so every text shown passes through `printable` first. And what it takes from the
page is text one can see: `is_visible` tells a typed question from one of invisible characters alone."""

from __future__ import annotations

import re
import unicodedata

REPLACEMENT = "\ufffd"  # �, Unicode's mark for a character that cannot be shown
# C0 (tab and newline aside, handled below), DEL and C1: the control characters of Unicode's category Cc.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# White space (Zs, Zl, Zp; tab, newline and the other ASCII spaces are Cc), control characters (Cc) and format
# characters (Cf: the zero-width space, non-joiner and joiner, the word joiner, the byte order mark, the soft hyphen,
# the direction marks): no glyph of their own.
_INVISIBLE_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf"})


def is_visible(text: str) -> bool:
    """Whether `text` holds a character that shows: one that is not white space, a control or a format character."""
    return any(unicodedata.category(char) not in _INVISIBLE_CATEGORIES for char in text)


def printable(text: str, keep_newlines: bool = False) -> str:
    """`text` with each control character shown as �; a tab becomes a space, and a line break (\\n, \\r\\n or \\r)
    stays one with `keep_newlines`, else a space too (a one-line answer)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    if not keep_newlines:
        text = text.replace("\n", " ")
    return _CONTROL.sub(REPLACEMENT, text)
