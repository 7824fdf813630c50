"""README.md and docs/ keep to their rules: user-facing docs state current behaviour, once.

README.md is the front door: at most 200 lines, no paragraph over 120 words, and a "Where next"
table that links every page of docs/ and config/README.md. The user-facing docs (README.md,
config/README.md, docs/ outside docs/notebook/) carry no dates and no commit hashes: measurements
with their history live in the lab notebook, docs/notebook/. Nothing points at ../shared.
Reads text only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
NOTEBOOK = DOCS / "notebook"
CONFIG_README = REPO / "config" / "README.md"

MAX_README_LINES = 200
MAX_PARAGRAPH_WORDS = 120

MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December"
    "|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)
DATE = re.compile(
    r"\b\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])\b"  # 2026-11-28
    rf"|\b(?:{MONTHS})\.? +\d{{4}}\b"  # November 2026
)
# A commit hash: 7 to 40 hex digits standing alone, at least one digit and one letter a-f (so
# neither a number nor a word). A path or a longer identifier around it is not a hash.
HEX_TOKEN = re.compile(r"(?<![\w/.-])[0-9a-f]{7,40}(?![\w/-])")
URL = re.compile(r"\b(?:https?|ftp)://\S+")
# Hex tokens that are not commit hashes, each with its reason. A sha256 (64 hex digits) is too long
# to look like one and needs no entry.
NOT_A_COMMIT: dict[str, str] = {}


def user_docs() -> list[Path]:
    """README.md, config/README.md and every docs/ page outside the notebook."""
    pages = [README, CONFIG_README]
    pages += [p for p in sorted(DOCS.rglob("*.md")) if NOTEBOOK not in p.parents]
    return [p for p in pages if p.is_file()]


def docs_pages_to_link() -> list[Path]:
    """What README's "Where next" table must link: docs/ outside the notebook, config/README.md."""
    pages = [p for p in sorted(DOCS.rglob("*.md")) if NOTEBOOK not in p.parents]
    return [*pages, CONFIG_README]


def prose_lines(path: Path, fences: bool = False) -> Iterator[tuple[int, str]]:
    """(line number, text) of every line outside fenced code blocks; with ``fences``, each code
    block as one blank line (so that it ends a paragraph)."""
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            if fences and fenced:
                yield number, ""
            continue
        if not fenced:
            yield number, line


def paragraphs(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(first line number, lines) of each paragraph: a run of non-blank lines outside code blocks
    and tables; headings and HTML comments end one."""
    start, lines = 0, []
    for number, line in prose_lines(path, fences=True):
        stripped = line.strip()
        breaks = not stripped or stripped.startswith(("|", "#", "<!--"))
        if breaks:
            if lines:
                yield start, lines
            start, lines = 0, []
            continue
        if not lines:
            start = number
        lines.append(stripped)
    if lines:
        yield start, lines


def relative(path: Path) -> str:
    return str(path.relative_to(REPO))


def section(path: Path, heading: str) -> list[tuple[int, str]]:
    """The lines of the `## heading` section of a markdown file, with their numbers."""
    lines = list(enumerate(path.read_text(encoding="utf-8").splitlines(), 1))
    starts = [i for i, (_, text) in enumerate(lines) if text.strip() == f"## {heading}"]
    assert starts, f"{relative(path)} has no section '## {heading}'"
    body = []
    for number, text in lines[starts[0] + 1 :]:
        if text.startswith("## "):
            break
        body.append((number, text))
    return body


def where_next_links() -> dict[str, int]:
    """Each link target of README's "Where next" table (a repository path) -> its line."""
    links: dict[str, int] = {}
    for number, text in section(README, "Where next"):
        if text.lstrip().startswith("|"):
            for target in re.findall(r"\]\(([^)\s]+)\)", text):
                links.setdefault(target.split("#")[0], number)
    return links


# --- the rules, each on a sample that breaks it ------------------------------------------------


def dates_and_hashes(line: str) -> list[str]:
    text = URL.sub(" ", line)
    found = [match.group(0) for match in DATE.finditer(text)]
    for match in HEX_TOKEN.finditer(text):
        token = match.group(0)
        if re.search(r"\d", token) and re.search(r"[a-f]", token) and token not in NOT_A_COMMIT:
            found.append(token)
    return found


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("measured on 2026-11-28 on the AVX2 machine", ["2026-11-28"]),
        ("as of November 2026, and in Nov. 2026", ["November 2026", "Nov. 2026"]),
        ("the run of 8dc1036 (a fresh clone of 04a6359)", ["8dc1036", "04a6359"]),
        (
            "full hash 95ca4d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c",
            ["95ca4d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c"],
        ),
        ("Wu et al. (2020), JSON schema 2020-12, 1,234,567 tokens", []),
        ("deadbeef, 1234567, bs16_lr5e-05, cu126, results/ab12cd3/x", []),
        ("https://example.org/8dc1036/file and a sha256 of " + "ab12" * 16, []),
    ],
)
def test_the_date_and_hash_patterns(line, found):
    assert dates_and_hashes(line) == found


def test_a_paragraph_runs_until_a_blank_line_a_table_or_a_code_block(tmp_path):
    sample = tmp_path / "sample.md"
    sample.write_text("# T\none two\nthree\n\n| a | b |\nfour\n```bash\nfive six\n```\nseven\n")
    assert list(paragraphs(sample)) == [(2, ["one two", "three"]), (6, ["four"]), (10, ["seven"])]


# --- the docs -----------------------------------------------------------------------------------


def test_readme_is_at_most_200_lines():
    count = len(README.read_text(encoding="utf-8").splitlines())
    assert count <= MAX_README_LINES, (
        f"README.md has {count} lines, more than {MAX_README_LINES}: move detail to docs/ "
        "(or measurements to docs/notebook/)"
    )


def test_no_readme_paragraph_is_over_120_words():
    long = [
        f"README.md:{start}: {len(' '.join(lines).split())} words, starting {lines[0][:60]!r}"
        for start, lines in paragraphs(README)
        if len(" ".join(lines).split()) > MAX_PARAGRAPH_WORDS
    ]
    assert not long, f"paragraphs over {MAX_PARAGRAPH_WORDS} words:\n" + "\n".join(long)


@pytest.mark.parametrize("page", user_docs(), ids=relative)
def test_user_docs_carry_no_dates_and_no_commit_hashes(page):
    found = [
        f"{relative(page)}:{number}: {', '.join(hits)}"
        for number, line in prose_lines(page)
        if (hits := dates_and_hashes(line))
    ]
    assert not found, (
        "dates or commit hashes in a user-facing doc (state current behaviour; a dated "
        "measurement goes to docs/notebook/):\n" + "\n".join(found)
    )


def test_every_doc_is_linked_from_where_next():
    links = where_next_links()
    unlinked = [relative(p) for p in docs_pages_to_link() if relative(p) not in links]
    assert not unlinked, f"README.md's '## Where next' table does not link: {unlinked}"


def test_every_where_next_link_exists():
    links = where_next_links()
    assert links, "README.md's '## Where next' table links nothing"
    missing = [
        f"README.md:{line}: {target}"
        for target, line in links.items()
        if not (REPO / target).exists()
    ]
    assert not missing, "'## Where next' links to files that do not exist:\n" + "\n".join(missing)


def test_the_notebook_says_it_is_one_and_lists_its_pages():
    index = NOTEBOOK / "README.md"
    text = index.read_text(encoding="utf-8")
    assert "lab notebook" in text, f"{relative(index)} must say it is the lab notebook"
    listed = set(re.findall(r"`([\w.-]+\.md)`", text))
    pages = {p.name for p in NOTEBOOK.glob("*.md")} - {"README.md"}
    assert pages <= listed, f"{relative(index)} does not list: {sorted(pages - listed)}"


def test_nothing_points_at_shared():
    pages = [README, *sorted(DOCS.rglob("*.md")), *sorted((REPO / "config").iterdir())]
    found = [
        f"{relative(page)}:{number}"
        for page in pages
        if page.is_file()
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if "../shared" in line
    ]
    assert not found, "points at ../shared, which a clone does not have:\n" + "\n".join(found)
