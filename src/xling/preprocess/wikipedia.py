"""Wikipedia dump (MediaWiki XML, ``.xml.bz2``) -> plain text, one paragraph a line.

``wikiextractor`` runs as a subprocess (its extraction uses worker processes and module-level
state, so a separate interpreter is the supported way to call it) with ``--json`` output on
stdout, which is read as a stream. JSON keeps each article's title out of the text, so what XLM
removes with ``grep``/``sed`` (``<doc ...>`` and ``</doc>`` lines, empty lines) and the title line
(which XLM leaves in) never reach the output.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from xling.base.atomic import atomic_open
from xling.base.errors import EmptyCorpusError, InputFileError
from xling.base.fileio import StrPath

# wikiextractor chooses decompression by file name (fileinput.hook_compressed); a dump saved under
# another name (a url without the suffix, a file renamed by hand) is read by its first bytes.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_MAGIC_SUFFIXES = ((b"BZh", ".bz2"), (b"\x1f\x8b", ".gz"))


def _named_for_wikiextractor(dump: Path, scratch: Path) -> Path:
    """``dump`` itself, or a symlink to it whose suffix says how it is compressed."""
    with open(dump, "rb") as handle:
        head = handle.read(3)
    for magic, suffix in _MAGIC_SUFFIXES:
        if head.startswith(magic) and not dump.name.endswith(suffix):
            link = Path(scratch) / f"{dump.name}.xml{suffix}"
            link.symlink_to(dump.resolve())
            return link
    return dump


def extract_wikipedia(
    dump_path: StrPath,
    out_path: StrPath,
    *,
    processes: int = 1,
    expand_templates: bool = True,
) -> int:
    """Extract article text from a MediaWiki XML dump with wikiextractor; return paragraphs written.

    Args:
        dump_path: a ``pages-articles`` dump (``.xml.bz2``, ``.xml.gz`` or ``.xml``).
        out_path: the text file, written atomically: one paragraph a line, stripped, no empty
            line, no markup line, no title.
        processes: wikiextractor's worker processes (``--processes``).
        expand_templates: expand templates as XLM's pipeline does (wikiextractor's default);
            ``False`` passes ``--no-templates`` (faster, drops template text).

    Raises:
        FileNotFoundError: no dump at ``dump_path``.
        InputFileError: wikiextractor failed (its last messages are included) or printed
            something that is not JSON.
        EmptyCorpusError: the dump produced no text.
    """
    dump = Path(dump_path)
    if not dump.is_file():
        raise FileNotFoundError(f"{dump}: no Wikipedia dump here; check the acquire stage")
    paragraphs = 0
    with (
        tempfile.TemporaryFile() as stderr,
        tempfile.TemporaryDirectory() as scratch,
        atomic_open(out_path) as out,
    ):
        named = _named_for_wikiextractor(dump, Path(scratch))
        command = _wikiextractor_command(named, processes, expand_templates)
        # The scratch working directory keeps any file wikiextractor may write out of the repo.
        with subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=stderr, cwd=scratch
        ) as process:
            assert process.stdout is not None
            for paragraph in _paragraphs(process, dump):
                out.write(paragraph)
                out.write("\n")
                paragraphs += 1
        if process.returncode != 0:
            stderr.seek(0)
            tail = stderr.read().decode("utf-8", "replace")[-2000:]
            raise InputFileError(
                dump,
                f"wikiextractor failed with exit code {process.returncode}: {tail.strip()}",
                fix="check that it is a complete MediaWiki pages-articles dump (`bzip2 -t FILE` "
                "tests a bz2 without extracting it); download it again only if that test fails",
            )
        if paragraphs == 0:
            raise EmptyCorpusError(
                dump, fix="check that this is a pages-articles dump with articles in namespace 0"
            )
    return paragraphs


def _wikiextractor_command(dump: Path, processes: int, expand_templates: bool) -> list[str]:
    """wikiextractor's command line: JSON articles of ``dump`` on stdout, quiet."""
    # absolute(), not resolve(): a link's own name carries the suffix
    command = [sys.executable, "-m", "wikiextractor.WikiExtractor", str(dump.absolute())]
    command += ["--json", "--output", "-", "--quiet", "--processes", str(processes)]
    if not expand_templates:
        command.append("--no-templates")
    return command


def _paragraphs(process: subprocess.Popen, dump: Path) -> Iterator[str]:
    """The paragraphs of the articles wikiextractor prints, stripped, none empty; a line that is not
    a JSON article kills it and raises InputFileError."""
    for number, raw in enumerate(process.stdout, start=1):
        try:
            text = json.loads(raw)["text"]
        except (ValueError, KeyError, TypeError):
            process.kill()
            raise InputFileError(
                dump,
                f"wikiextractor printed a line that is not a JSON article (output line"
                f" {number}: {raw[:80]!r})",
                fix="check that the installed wikiextractor supports --json",
            ) from None
        # splitlines also breaks at \r, \x85, \u2028...: no reader will see a line break inside
        # a paragraph line, whatever its idea of a newline.
        # wikiextractor escapes &, < and > as HTML entities by default (--html-safe, on in JSON
        # output too), which Moses would cut into "& amp ;": undo it.
        # A numeric reference to half a surrogate pair (&#xD83D;) comes out of wikiextractor as a
        # lone surrogate, which UTF-8 cannot write.
        text = _LONE_SURROGATE.sub("\ufffd", html.unescape(text))
        for paragraph in text.splitlines():
            paragraph = paragraph.strip()
            if paragraph:
                yield paragraph
