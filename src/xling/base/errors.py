"""Errors raised for bad input files and bad settings.

Each message names the file, the line (where there is one) and how to fix the problem, so that a
failed Snakemake job tells the user what to do without reading a traceback.
"""

from __future__ import annotations

from os import PathLike


class InputFileError(ValueError):
    """A file that cannot be used as it is: names the file, the line (1-based) and the fix."""

    def __init__(
        self,
        path: str | PathLike[str],
        reason: str,
        *,
        line: int | None = None,
        fix: str | None = None,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        self.fix = fix
        where = self.path if line is None else f"{self.path}, line {line}"
        message = f"{where}: {reason}"
        if fix:
            message += f". Fix: {fix}"
        super().__init__(message)


class DataFormatError(InputFileError):
    """A data file that breaks its format (docs/contracts.md): ``{path}:{line}: {reason} ({fix})``.

    The compact ``file:line`` form (editors and grep jump to it) rather than InputFileError's
    wording, because the readers of :mod:`xling.contracts` and their tests have always used it.
    """

    def __init__(self, path: str | PathLike[str], line: int, reason: str, fix: str = "") -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        self.fix = fix or None
        ValueError.__init__(self, f"{path}:{line}: {reason}" + (f" ({fix})" if fix else ""))


class EmptyCorpusError(InputFileError):
    """A corpus file with no usable line."""

    def __init__(self, path: str | PathLike[str], *, fix: str | None = None) -> None:
        super().__init__(
            path,
            "the corpus is empty (no non-empty line)",
            fix=fix or "check the stage that wrote it, or remove this language from the config",
        )


class SettingsError(ValueError):
    """A setting (from config) that cannot work, such as a language with no segmenter."""
