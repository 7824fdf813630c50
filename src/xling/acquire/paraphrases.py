"""en' of Wu, Conneau et al. (2020), section 5.2: English paraphrases of the parallel sentences.

The paper obtains them "by backtranslation from French" (en -> fr -> en'); no public file holds
them, so the paper study takes them from the manual folder and checks that they are line-aligned
with the English parallel sentences they paraphrase.
"""

from __future__ import annotations

from pathlib import Path

from xling.acquire.manual import paraphrase_file
from xling.base.atomic import atomic_open
from xling.base.errors import InputFileError
from xling.base.fileio import StrPath, count_lines, iter_lines


def import_paraphrases(manual_dir: StrPath, lang: str, english: StrPath, out: StrPath) -> int:
    """Copy ``manual_dir/parallel/{lang}.txt`` to ``out`` after checking it line by line against
    the ``english`` sentences it paraphrases; returns the line count."""
    source = paraphrase_file(lang, manual_dir)
    expected = count_lines(english)
    if not source.is_file():
        raise InputFileError(
            source,
            f"missing: the {lang} paraphrases of the {expected} English parallel sentences",
            fix=f"write line i as a paraphrase of line i of {english} (Wu et al. 2020 §5.2 "
            "back-translated en -> fr -> en'), UTF-8, one sentence a line",
        )
    lines = 0
    with atomic_open(out) as handle:
        for number, text in iter_lines(source):
            if not text.strip():
                raise InputFileError(
                    source, "empty line", line=number, fix="every English sentence needs one"
                )
            handle.write(text + "\n")
            lines = number
    if lines != expected:
        Path(out).unlink()
        raise InputFileError(
            source,
            f"{lines} lines, but {english} has {expected}",
            fix="give exactly one paraphrase per English parallel sentence, in the same order",
        )
    return lines
