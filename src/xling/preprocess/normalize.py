"""Optional lowercasing and accent removal, applied after segmentation (as XLM does).

XLM's ``lowercase_and_remove_accent.py`` decomposes text (NFD) and drops every nonspacing mark
(Unicode category ``Mn``). That also destroys letters that are written with a mark: Russian
``й`` becomes ``и`` (``мой`` "my" turns into ``мои`` "my (plural)"), ``ё`` becomes ``е``, and
it removes the Devanagari virama and the Japanese (han)dakuten, which are not accents at all.

This module removes accents more narrowly:

* only marks from the *Combining Diacritical Marks* blocks (U+0300-U+036F, U+1AB0-U+1AFF,
  U+1DC0-U+1DFF) are removed; marks of other scripts (virama, dakuten, Arabic vowel marks,
  Hebrew points) are kept;
* a breve (U+0306) or diaeresis (U+0308) directly on a Cyrillic letter is kept, because it makes
  a letter of the alphabet there (``й``, ``ё``, ``ў``, ``ї``, ``ӓ``, ...), while the Cyrillic
  stress mark (acute, U+0301) is removed like any accent;
* the result is recomposed (NFC), so ``й`` stays one code point.
"""

from __future__ import annotations

import re
import unicodedata

_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff"
_MARKS_BUT_BREVE_DIAERESIS = "\u0300-\u0305\u0307\u0309-\u036f\u1ab0-\u1aff\u1dc0-\u1dff"
_CYRILLIC = "\u0400-\u04ff\u0500-\u052f"

# A mark is removed unless it is a breve/diaeresis that sits directly on a Cyrillic letter.
_ACCENT = re.compile(
    f"(?<![{_CYRILLIC}])[{_MARKS}]|(?<=[{_CYRILLIC}])[{_MARKS_BUT_BREVE_DIAERESIS}]"
)


def remove_accents(text: str) -> str:
    """Remove Latin/Greek/Cyrillic accents but keep letters such as ``й`` and ``ё`` (see module)."""
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", _ACCENT.sub("", decomposed))
