"""The ```bash blocks of the docs, and a scratch copy of the repository to run them in.

Shared by the tests that run the documented commands (tests/test_howto.py for docs/howto.md and
config/README.md, tests/test_doc_commands.py for the other pages): a block is found by its fence,
indented or not (a block inside a list item), and named by the headings above it.
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENV = Path(sys.executable).parents[1]  # what `.venv` stands for in the docs
LINKED = ("Snakefile", "workflow", "src", "envs", "slurm", "pyproject.toml")
DRY = {"-n", "--dry-run", "--dryrun"}
HEADING = re.compile(r"(#{1,6}) (.*)")

# The headings above a line: {level: title}, e.g. {1: "How-tos", 2: "Rerun one table"}.
Headings = dict[int, str]


def section_and_subsection(headings: Headings) -> str:
    """The heading "Section / Subsection" (the page's title left out)."""
    return " / ".join(headings[level] for level in (2, 3) if headings.get(level))


@dataclass(frozen=True)
class Block:
    doc: Path
    heading: str  # what ``bash_blocks``'s ``heading`` made of the headings above it
    index: int  # its place among the blocks under that heading
    text: str  # dedented by its fence's indentation
    line: int = 0  # the line number of its first line in ``doc``

    @property
    def id(self) -> str:
        return f"{self.heading} [{self.index}]"


def bash_blocks(
    doc: Path, heading: Callable[[Headings], str] = section_and_subsection
) -> list[Block]:
    """Every ```bash block of ``doc``, in order, each named by ``heading`` of the headings above
    it."""
    headings: Headings = {}
    blocks: list[Block] = []
    counts: dict[str, int] = {}
    fence: list[str] | None = None
    name, indent, first = "", 0, 0
    lines = doc.read_text(encoding="utf-8").splitlines(keepends=True)
    for number, line in enumerate(lines, 1):
        stripped = line.lstrip(" ")
        if fence is not None:
            if stripped.startswith("```"):
                blocks.append(Block(doc, name, counts[name], "".join(fence), first))
                counts[name] += 1
                fence = None
            else:
                fence.append(line[min(indent, len(line) - len(stripped)) :])
        elif stripped.startswith("```bash"):
            name = heading(headings)
            counts.setdefault(name, 0)
            fence, indent, first = [], len(line) - len(stripped), number + 1
        elif match := HEADING.match(line):
            level = len(match.group(1))
            headings = {k: v for k, v in headings.items() if k < level}
            headings[level] = match.group(2).strip()
    return blocks


def command_lines(block: Block) -> list[tuple[int, str]]:
    """(line number in the doc, command) of each command of the block: comment lines and heredoc
    bodies left out, a line continued with a backslash joined to the next."""
    found: list[tuple[int, str]] = []
    terminator, pending, start = None, "", 0
    for number, line in enumerate(block.text.splitlines(), block.line):
        if terminator is not None:
            terminator = None if line.strip() == terminator else terminator
            continue
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        text, pending = pending + line, ""
        found.append((start, text.strip()))
        heredoc = re.search(r"<<-?\s*'?(\w+)'?", text)
        if heredoc:
            terminator = heredoc.group(1)
    return found


def commands(text: str) -> list[str]:
    """The block's command lines, heredoc bodies left out."""
    lines, terminator = [], None
    for line in text.splitlines():
        if terminator is not None:
            terminator = None if line.strip() == terminator else terminator
            continue
        if line.strip() and not line.lstrip().startswith("#"):
            lines.append(line)
        heredoc = re.search(r"<<-?\s*'?(\w+)'?", line)
        if heredoc:
            terminator = heredoc.group(1)
    return lines


def is_snakemake(line: str) -> bool:
    return Path(shlex.split(line)[0]).name == "snakemake"


def dry(text: str) -> str:
    """The block with every Snakemake line that would run jobs made a dry run."""
    runs = {line for line in commands(text) if is_snakemake(line) and not DRY & set(line.split())}
    return "\n".join(f"{line} --dry-run" if line in runs else line for line in text.splitlines())


def scratch_repository(
    root: Path, linked: Iterable[str] = LINKED, copied: Iterable[str] = ()
) -> Path:
    """A copy of the repository at ``root`` made of links: ``linked`` (files or folders) link to
    the repository's, ``.venv`` to the running environment, ``config/`` is a real folder of links
    (so that the override files a block writes land here), and ``copied`` are real copies (what a
    command edits or rewrites in place, which must not reach the repository through a link)."""
    root.mkdir(parents=True, exist_ok=True)
    copied = list(copied)
    for name in linked:
        if name not in copied:
            (root / name).symlink_to(REPO / name)
    for name in copied:
        source, target = REPO / name, root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy2(source, target)
    (root / ".venv").symlink_to(VENV)
    (root / "config").mkdir()
    for path in sorted((REPO / "config").iterdir()):
        (root / "config" / path.name).symlink_to(path)
    return root
