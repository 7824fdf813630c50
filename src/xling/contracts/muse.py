"""MUSE bilingual dictionaries: ``source_word target_word`` a line, separated by a space.

The reader also takes a third column, a positive weight (MUSE has none: every entry weighs 1),
and tabs as separators. Its errors keep the wording of :class:`xling.base.errors.InputFileError`
(``{path}, line {n}: ...``), which the code-switching stage has always reported.
"""

from __future__ import annotations

import math

from xling.base.errors import InputFileError
from xling.base.fileio import StrPath, iter_lines

_FORMAT_FIX = (
    "each line must be `source_word target_word` (MUSE format), optionally followed by a"
    " positive weight, separated by spaces or tabs"
)


def read_muse(
    path: StrPath, *, reverse: bool = False, keep_identical: bool = False
) -> dict[str, dict[str, float]]:
    """Word -> {translation: weight}; ``reverse=True`` maps the second column to the first.

    Blank lines are skipped; a pair of identical words is left out (code-switching: it replaces
    nothing) unless ``keep_identical`` (word translation: MUSE's evaluation keeps such pairs,
    ``paris paris``, as any other); a repeated pair keeps its first weight.

    Raises:
        InputFileError: a line that does not parse, a weight that is not a positive number,
            or no usable entry in the file.
    """
    entries: dict[str, dict[str, float]] = {}
    for number, text in iter_lines(path):
        fields = text.split()
        if not fields:
            continue
        if len(fields) not in (2, 3):
            raise InputFileError(path, f"cannot parse {text[:80]!r}", line=number, fix=_FORMAT_FIX)
        weight = _parse_weight(fields[2], path, number) if len(fields) == 3 else 1.0
        source, target = (fields[1], fields[0]) if reverse else (fields[0], fields[1])
        if keep_identical or source != target:
            entries.setdefault(source, {}).setdefault(target, weight)
    if not entries:
        raise InputFileError(
            path,
            "no dictionary entry" + ("" if keep_identical else " (other than identical pairs)"),
            fix=_FORMAT_FIX,
        )
    return entries


def _parse_weight(field: str, path: StrPath, number: int) -> float:
    try:
        weight = float(field)
    except ValueError:
        weight = math.nan
    if not weight > 0 or math.isinf(weight):
        raise InputFileError(
            path, f"the weight {field!r} is not a positive number", line=number, fix=_FORMAT_FIX
        )
    return weight


def format_muse_entry(source: str, target: str) -> str:
    """One dictionary line."""
    return f"{source} {target}\n"
