"""The toy world dressed as the paper study's downloads: real formats, real file names.

A miniature of the paper study for the test suite: it serves these files from a local HTTP
server on 127.0.0.1 and runs the study's unchanged acquisition path (download, unpack, import,
Wikipedia extraction) against them. Everything is generated from a toy world that
``xling.toyworld.generate`` wrote in the project's internal layout (docs/contracts.md, section 1);
nothing is real data. The same toy world gives the same bytes: archives carry fixed times and
owners, and bz2 and xz store no time.

    written = write_releases(toy_dir, out_dir, languages=["en", "zh"],
                             ud_treebanks={"en": "UD_English-EWT", "zh": "UD_Chinese-GSD"})

Paths under ``out_dir`` repeat the paths of the real URLs (config/config.yaml), so a config
points at ``http://127.0.0.1:PORT/`` + the same path:

* ``{lang}wiki/{date}/{lang}wiki-{date}-pages-articles.xml.bz2``: a MediaWiki XML export, the
  corpus's ``wiki`` sentences as articles with light markup, a template page and a redirect;
  ``{lang}wiki-{date}-sha1sums.txt`` next to it, as Wikimedia lists its dump files.
* ``cc-100/{code}.txt.xz``: the ``cc`` sentences as CC-100 text (a paragraph a line, an empty
  line after each document); ``zh`` is ``zh-Hans`` there.
* ``XNLI/XNLI-1.0.zip`` (``xnli.dev.tsv``, ``xnli.test.tsv``) and ``XNLI/XNLI-MT-1.0.zip``
  (``multinli/multinli.train.en.tsv``).
* ``ud-treebanks-v2.3.tgz``: a folder per treebank, ``{lang}_{name}-ud-{split}.conllu``.
* ``dictionaries/en-{lang}.0-5000.txt`` and ``.5000-6500.txt``: MUSE (train and test).
* ``manual/``: the hand-provided NER files of ``xling.acquire.manual.NER_FILES``: WikiANN for every
  language, CoNLL 2003 from English (IOB1, with POS and chunk columns), Levow (2006) from Chinese
  (a character a line).
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import itertools
import lzma
import re
import tarfile
import zipfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from xml.sax.saxutils import escape, quoteattr

from xling.acquire.manual import NER_FILES
from xling.contracts import layout
from xling.contracts.ner import TaggedSentence, read_ner

from .api import DATASET
from .schema import SPLITS

RELEASE_TIME = datetime(2026, 11, 1, tzinfo=UTC)  # every archive member's time
CC100_CODES = {"zh": "zh-Hans"}  # CC-100's file names where they differ from the language code
XNLI_ZIP = "XNLI/XNLI-1.0.zip"
XNLI_MT_ZIP = "XNLI/XNLI-MT-1.0.zip"
UD_RELEASE = "ud-treebanks-v2.3"
UD_TGZ = f"{UD_RELEASE}.tgz"
MUSE_SPANS = {"train": "0-5000", "test": "5000-6500"}
MANUAL_DIR = "manual"
CONLL2003_LANG, LEVOW2006_LANG = "en", "zh"  # the one language of each of these NER datasets

# Grouping cycles (fixed, so that the bytes are too): sentences per paragraph, paragraphs per
# Wikipedia article and per CC-100 document.
SENTENCES_PER_PARAGRAPH = (3, 2, 4, 1)
PARAGRAPHS_PER_ARTICLE = (3, 1, 2, 4)
PARAGRAPHS_PER_DOCUMENT = (2, 1, 3)
# Wikipedia markup the extractor has to remove: a section heading (wikiextractor keeps its text
# as a line "History."), a maintenance template defined by a template page that expands to
# nothing, and a redirect to the first article.
SECTION_HEADING = "History"
TEMPLATE = "Use dmy dates"
TEMPLATE_TEXT = "<noinclude>Marks articles that write dates as day month year.</noinclude>"
REDIRECT_TITLE = "Toy world"
SHA1SUMS_EXTRA = ("pages-articles-multistream-index.txt.bz2", "stub-articles.xml.gz")
NAMESPACES = {-2: "Media", -1: "Special", 0: "", 1: "Talk", 2: "User", 4: "Wikipedia",
              6: "File", 10: "Template", 14: "Category", 828: "Module"}  # fmt: skip
CONLL2003_SENTENCES_PER_DOCUMENT = 10


def wikipedia_dump(lang: str, date: str) -> str:
    return f"{lang}wiki/{date}/{lang}wiki-{date}-pages-articles.xml.bz2"


def wikipedia_sha1sums(lang: str, date: str) -> str:
    return f"{lang}wiki/{date}/{lang}wiki-{date}-sha1sums.txt"


def cc100_file(lang: str, codes: Mapping[str, str] = CC100_CODES) -> str:
    return f"cc-100/{codes.get(lang, lang)}.txt.xz"


def muse_dictionary(lang: str, split: str) -> str:
    return f"dictionaries/en-{lang}.{MUSE_SPANS[split]}.txt"


def write_releases(
    toyworld_dir: Path,
    out_dir: Path,
    *,
    languages: Sequence[str],
    ud_treebanks: Mapping[str, str],
    date: str = "20261101",
    cc100_codes: Mapping[str, str] = CC100_CODES,
) -> dict[str, Path]:
    """Write every release file of ``languages`` under ``out_dir``; return relative path -> path.

    ``ud_treebanks`` maps a language to its treebank folder in the UD release (config
    ``data.ud.<dataset>.treebanks``, e.g. ``{"en": "UD_English-EWT"}``); ``date`` is the
    Wikipedia dumps' date. MUSE dictionaries are written for the languages the toy world has one
    for (not en', whose words are English's), CoNLL 2003 if English is among ``languages``,
    Levow (2006) if Chinese is.
    """
    toy = Path(toyworld_dir)
    files: dict[str, bytes] = {}
    for lang in languages:
        dump = bz2.compress(wikipedia_xml(_lines(toy / layout.corpus("wiki", lang)), lang, date))
        files[wikipedia_dump(lang, date)] = dump
        files[wikipedia_sha1sums(lang, date)] = wikipedia_sha1sums_text(lang, date, dump)
        files[cc100_file(lang, cc100_codes)] = cc100_xz(_lines(toy / layout.corpus("cc", lang)))
    files[XNLI_ZIP], files[XNLI_MT_ZIP] = xnli_zips(toy)
    files[UD_TGZ] = ud_tgz(toy, ud_treebanks)
    # The toy world writes a dictionary for each language with words to translate (not en').
    translated = [lang for lang in languages if (toy / layout.muse("en", lang, "train")).exists()]
    files |= muse_dictionaries(toy, translated)
    files |= manual_ner(toy, languages)
    return write_files(files, out_dir)


def write_files(files: Mapping[str, bytes], out_dir: Path) -> dict[str, Path]:
    """Write each relative path's bytes under ``out_dir``; return relative path -> path."""
    written = {}
    for rel, data in files.items():
        path = Path(out_dir) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written[rel] = path
    return written


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _groups(items: Sequence, sizes: Sequence[int]) -> list[list]:
    """Consecutive groups of ``items``, their sizes cycling through ``sizes``."""
    groups, start = [], 0
    while start < len(items):
        size = sizes[len(groups) % len(sizes)]
        groups.append(list(items[start : start + size]))
        start += size
    return groups


def paragraphs(sentences: Sequence[str]) -> list[str]:
    """Sentences joined into paragraphs, with a space unless the language writes none (zh; read
    from the text, as the toy world's files do not name their language's separator)."""
    joiner = " " if any(" " in sentence for sentence in sentences) else ""
    return [joiner.join(group) for group in _groups(sentences, SENTENCES_PER_PARAGRAPH)]


def _leading_word(text: str) -> str:
    """The first word of ``text`` (its first two characters in a language without spaces)."""
    match = re.match(r"\w+", text)
    if match is None:
        return ""
    return match.group() if " " in text else match.group()[:2]


# --- Wikipedia ---------------------------------------------------------------------------------


def wikipedia_xml(sentences: Sequence[str], lang: str, date: str) -> bytes:
    """A pages-articles export: a template page, articles of the paragraphs, a redirect."""
    articles = _groups(paragraphs(sentences), PARAGRAPHS_PER_ARTICLE)
    titles = _titles(articles)
    timestamp = f"{date[:4]}-{date[4:6]}-{date[6:]}T00:00:00Z"
    page_ids = itertools.count(10)
    pages = [_page(f"Template:{TEMPLATE}", 10, next(page_ids), TEMPLATE_TEXT, timestamp)]
    for number, (title, article) in enumerate(zip(titles, articles, strict=True)):
        # each article links to the one before it (the first to the last)
        text = _article_wikitext(article, link_target=titles[number - 1])
        pages.append(_page(title, 0, next(page_ids), text, timestamp))
    redirect = f"#REDIRECT [[{titles[0]}]]\n\n{{{{R from alternative name}}}}"
    pages.append(_page(REDIRECT_TITLE, 0, next(page_ids), redirect, timestamp, titles[0]))
    namespaces = "".join(
        f'      <namespace key="{key}" case="first-letter" />\n'
        if not name
        else f'      <namespace key="{key}" case="first-letter">{name}</namespace>\n'
        for key, name in NAMESPACES.items()
    )
    xml = (
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://www.mediawiki.org/xml/export-0.10/ '
        'http://www.mediawiki.org/xml/export-0.10.xsd" version="0.10" '
        f'xml:lang="{lang}">\n'
        "  <siteinfo>\n"
        "    <sitename>Wikipedia</sitename>\n"
        f"    <dbname>{lang}wiki</dbname>\n"
        f"    <base>https://{lang}.wikipedia.org/wiki/Main_Page</base>\n"
        "    <generator>MediaWiki 1.46.0-wmf.1</generator>\n"
        "    <case>first-letter</case>\n"
        f"    <namespaces>\n{namespaces}    </namespaces>\n"
        "  </siteinfo>\n"
        f"{''.join(pages)}</mediawiki>\n"
    )
    return xml.encode("utf-8")


def _titles(articles: Sequence[Sequence[str]]) -> list[str]:
    """Each article's title: the first word of its text, numbered when already taken."""
    titles: list[str] = []
    for article in articles:
        word = _leading_word(article[0]) or "Article"
        title, number = word, 1
        while title in titles:
            number += 1
            title = f"{word} ({number})"
        titles.append(title)
    return titles


def _article_wikitext(article: Sequence[str], link_target: str) -> str:
    """The template, the title word in bold, a link on the second paragraph, a last section."""
    blocks = [f"{{{{{TEMPLATE}|date=November 2026}}}}\n" + _wrap(article[0], "'''", "'''")]
    if len(article) > 1:
        blocks.append(_wrap(article[1], f"[[{link_target}|", "]]"))
    if len(article) > 2:
        blocks += article[2:-1]
        blocks.append(f"== {SECTION_HEADING} ==\n{article[-1]}")
    return "\n\n".join(blocks)


def _wrap(paragraph: str, before: str, after: str) -> str:
    """``paragraph`` with its first word wrapped in markup (which extraction must remove)."""
    word = _leading_word(paragraph)
    return f"{before}{word}{after}{paragraph[len(word) :]}" if word else paragraph


def _page(
    title: str, ns: int, page_id: int, text: str, timestamp: str, redirect: str | None = None
) -> str:
    data = text.encode("utf-8")
    sha1 = _base36(hashlib.sha1(data).digest())  # MediaWiki's revision sha1
    redirect_line = f"    <redirect title={quoteattr(redirect)} />\n" if redirect else ""
    return (
        "  <page>\n"
        f"    <title>{escape(title)}</title>\n"
        f"    <ns>{ns}</ns>\n"
        f"    <id>{page_id}</id>\n"
        f"{redirect_line}"
        "    <revision>\n"
        f"      <id>{1_000_000 + page_id}</id>\n"
        f"      <timestamp>{timestamp}</timestamp>\n"
        "      <contributor>\n        <username>ToyBot</username>\n        <id>1</id>\n"
        "      </contributor>\n"
        "      <model>wikitext</model>\n"
        "      <format>text/x-wiki</format>\n"
        f'      <text bytes="{len(data)}" sha1="{sha1}" xml:space="preserve">'
        f"{escape(text)}</text>\n"
        f"      <sha1>{sha1}</sha1>\n"
        "    </revision>\n"
        "  </page>\n"
    )


def _base36(digest: bytes) -> str:
    number, digits = int.from_bytes(digest, "big"), ""
    while number:
        number, rest = divmod(number, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[rest] + digits
    return digits.rjust(31, "0")


def wikipedia_sha1sums_text(lang: str, date: str, dump: bytes) -> bytes:
    """Wikimedia's list, ``<sha1>  <file>``, by name: the dump and other files of the same date."""
    sums = {PurePosixPath(wikipedia_dump(lang, date)).name: hashlib.sha1(dump).hexdigest()}
    for suffix in SHA1SUMS_EXTRA:  # listed only, as the real list names many files
        name = f"{lang}wiki-{date}-{suffix}"
        sums[name] = hashlib.sha1(name.encode()).hexdigest()
    return "".join(f"{sums[name]}  {name}\n" for name in sorted(sums)).encode()


# --- CC-100 ------------------------------------------------------------------------------------


def cc100_xz(sentences: Sequence[str]) -> bytes:
    """A paragraph a line, an empty line after each document; xz-compressed."""
    documents = _groups(paragraphs(sentences), PARAGRAPHS_PER_DOCUMENT)
    text = "".join("".join(f"{p}\n" for p in document) + "\n" for document in documents)
    return lzma.compress(text.encode("utf-8"))


# --- archives: XNLI, UD ------------------------------------------------------------------------


def _with_folders(members: Mapping[str, bytes]) -> list[tuple[str, bytes | None]]:
    """The members and their folders (data None), each folder right before its contents."""
    folders = {str(p) for name in members for p in PurePosixPath(name).parents if str(p) != "."}
    return sorted([*members.items(), *dict.fromkeys(folders).items()], key=lambda item: item[0])


def _zip(members: Mapping[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    stamp = RELEASE_TIME.timetuple()[:6]
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in _with_folders(members):
            if data is None:
                info = zipfile.ZipInfo(f"{name}/", date_time=stamp)
                info.external_attr = 0o40755 << 16 | 0x10  # a directory (unix mode, MS-DOS flag)
                archive.writestr(info, b"")
            else:
                info = zipfile.ZipInfo(name, date_time=stamp)
                info.external_attr = 0o100644 << 16
                archive.writestr(info, data, zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def xnli_zips(toy: Path) -> tuple[bytes, bytes]:
    """XNLI-1.0.zip and XNLI-MT-1.0.zip; the toy world's tsv files have XNLI's columns already."""
    xnli = {f"XNLI-1.0/xnli.{s}.tsv": (toy / layout.xnli(s)).read_bytes() for s in ("dev", "test")}
    train = (toy / layout.xnli_train()).read_bytes()
    return _zip(xnli), _zip({"XNLI-MT-1.0/multinli/multinli.train.en.tsv": train})


def _tgz(members: Mapping[str, bytes]) -> bytes:
    """A gzipped tar owned by root (uid 0, no names), every time RELEASE_TIME."""
    buffer = io.BytesIO()
    stamp = int(RELEASE_TIME.timestamp())
    with (
        gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=stamp) as compressed,
        tarfile.open(fileobj=compressed, mode="w", format=tarfile.GNU_FORMAT) as archive,
    ):
        for name, data in _with_folders(members):
            info = tarfile.TarInfo(name)
            info.mtime = stamp
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                archive.addfile(info)
            else:
                info.mode, info.size = 0o644, len(data)
                archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def ud_tgz(toy: Path, treebanks: Mapping[str, str]) -> bytes:
    """The release: ``{lang}_{name}-ud-{split}.conllu`` in each folder (UD_English-EWT: en_ewt)."""
    members = {}
    for lang, folder in treebanks.items():
        prefix = f"{lang}_{folder.rsplit('-', 1)[-1].lower()}"
        members[f"{UD_RELEASE}/{folder}/README.md"] = f"# {folder}\n\nA toy treebank.\n".encode()
        for split in SPLITS:
            conllu = (toy / layout.ud(DATASET, lang, split)).read_bytes()
            members[f"{UD_RELEASE}/{folder}/{prefix}-ud-{split}.conllu"] = conllu
    return _tgz(members)


# --- MUSE ---------------------------------------------------------------------------------------


def muse_dictionaries(toy: Path, languages: Sequence[str]) -> dict[str, bytes]:
    """The toy world's train and test dictionaries, in MUSE's format already, under MUSE's names."""
    return {
        muse_dictionary(lang, split): (toy / layout.muse("en", lang, split)).read_bytes()
        for lang in languages
        for split in MUSE_SPANS
    }


# --- hand-provided NER -------------------------------------------------------------------------


def manual_ner(toy: Path, languages: Sequence[str]) -> dict[str, bytes]:
    """WikiANN of every language; CoNLL 2003 from English, Levow (2006) from Chinese."""
    files = {}

    def manual(dataset: str, lang: str, split: str) -> str:
        return f"{MANUAL_DIR}/{NER_FILES[dataset][split].format(lang=lang)}"

    def toy_ner(lang: str, split: str) -> Path:
        return toy / layout.ner(DATASET, lang, split)

    for lang in languages:
        for split in SPLITS:  # the toy world writes WikiANN's format already
            files[manual("wikiann", lang, split)] = toy_ner(lang, split).read_bytes()
    if CONLL2003_LANG in languages:
        for split in NER_FILES["conll2003"]:
            sentences = read_ner(toy_ner(CONLL2003_LANG, split), CONLL2003_LANG)
            files[manual("conll2003", CONLL2003_LANG, split)] = conll2003_text(sentences)
    if LEVOW2006_LANG in languages:
        for split in NER_FILES["levow2006"]:  # train and test: the release has no dev set
            sentences = read_ner(toy_ner(LEVOW2006_LANG, split), LEVOW2006_LANG)
            files[manual("levow2006", LEVOW2006_LANG, split)] = char_bio_text(sentences)
    return files


def iob2_to_iob1(tags: Sequence[str]) -> list[str]:
    """CoNLL 2003's IOB1: I- inside and at the start of an entity; B- only right after another
    entity of the same type."""
    out, previous = [], "O"
    for tag in tags:
        out.append(f"I-{tag[2:]}" if tag.startswith("B-") and previous[2:] != tag[2:] else tag)
        previous = tag
    return out


def _pos_and_chunk(word: str, tag: str) -> tuple[str, str]:
    """Plausible Penn Treebank POS and chunk tags (the study reads only the NER column)."""
    if not any(char.isalnum() for char in word):
        return ("." if word in ".!?" else word), "O"
    if word.isdigit():
        return "CD", "I-NP"
    return ("NNP" if tag != "O" else "NN"), "I-NP"


def conll2003_text(sentences: Sequence[TaggedSentence]) -> bytes:
    """``word POS chunk NER`` lines (IOB1), an empty line after each sentence, documents of
    CONLL2003_SENTENCES_PER_DOCUMENT sentences each opened by a ``-DOCSTART-`` line."""
    lines = []
    for number, sentence in enumerate(sentences):
        if number % CONLL2003_SENTENCES_PER_DOCUMENT == 0:
            lines.append("-DOCSTART- -X- -X- O\n\n")
        for word, tag in zip(sentence.words, iob2_to_iob1(sentence.tags), strict=True):
            lines.append(f"{word} {' '.join(_pos_and_chunk(word, tag))} {tag}\n")
        lines.append("\n")
    return "".join(lines).encode("utf-8")


def char_bio_text(sentences: Sequence[TaggedSentence]) -> bytes:
    """Levow (2006) MSRA as commonly distributed (msra_train_bio.txt): ``char<TAB>tag`` a line,
    BIO with PER, LOC and ORG, an empty line after each sentence. A word's B- tag goes to its
    first character, I- to the characters after it."""
    lines = []
    for sentence in sentences:
        for word, tag in zip(sentence.words, sentence.tags, strict=True):
            inside = "O" if tag == "O" else f"I-{tag[2:]}"
            lines += [f"{char}\t{tag if i == 0 else inside}\n" for i, char in enumerate(word)]
        lines.append("\n")
    return "".join(lines).encode("utf-8")
