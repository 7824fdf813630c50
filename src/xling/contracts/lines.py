"""The lines of a data file, for the readers of this package."""

from __future__ import annotations

from pathlib import Path

from xling.errors import DataFormatError


def read_lines(path: str | Path) -> list[str]:
    """The file's text split into lines (read in text mode, so ``\\r\\n`` ends a line too).

    Raises:
        DataFormatError: the file is not UTF-8 (naming the line of the first bad byte).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        line = Path(path).read_bytes()[: error.start].count(b"\n") + 1
        raise DataFormatError(
            path, line, "not valid UTF-8", "re-encode the file as UTF-8"
        ) from None
    return text.split("\n")
