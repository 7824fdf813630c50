"""The toy world as the downloads of Wu et al. section 5 and Muller et al.: real formats and names.

The companion of :mod:`xling.toyworld.releases` (Table 1's downloads) for the inputs of the
analyses: the Tatoeba test sets as LASER distributes them, the fastText Wikipedia vectors and the
UD v2.4 release. MUSE's dictionaries, which both parts read, are written by ``releases``.
Everything is generated from a toy world that ``xling.toyworld.generate`` wrote in the project's
internal layout; nothing is real data, and the same toy world gives the same bytes.

    written = write_analysis_releases(
        toy_dir, out_dir, languages=["en", "zh"],
        tatoeba_codes=config["data"]["tatoeba"]["codes"],   # {"zh": "cmn", ...}
        ud_datasets=config["data"]["ud"],                   # those with `download: ud24`
    )

Paths under ``out_dir`` repeat the path of the real URL after its host (config/config.yaml,
section ``data``), so a config points at ``http://127.0.0.1:PORT/`` + the same path; the UD
release is written at the top, as ``releases`` writes v2.3:

* ``facebookresearch/LASER/main/data/tatoeba/v1/tatoeba.{code}-eng.{code}`` and ``.eng``: the
  toy world's Tatoeba pair ``en``-``lang``, one sentence a line, line-aligned; ``{code}`` is
  LASER's three-letter code (config ``data.tatoeba.codes``: zh is ``cmn``). A language without a
  code there (en', which no corpus has) gets none.
* ``fasttext/vectors-wiki/wiki.{lang}.vec``: fastText's text format, as fastText writes it: a
  header ``<count> <dim>``, then ``word v1 .. vdim`` with five significant digits and a space
  after each value. The words are the tokens of the toy world's Wikipedia corpus that occur at
  least FASTTEXT_MIN_COUNT times (fastText's default, which the published vectors kept), most
  frequent first, with fastText's end-of-line word ``</s>`` counted once a line; the vectors come
  from a generator seeded by the language (random: they carry no meaning).
* ``ud-treebanks-v2.4.tgz``: a folder per treebank that a ``data.ud`` dataset downloading
  ``ud24`` names for one of the languages, with the dataset's splits only (PUD: test), each as
  ``{lang}_{name}-ud-{split}.conllu`` and its raw text ``.txt``. Every treebank holds the toy
  world's ``ud/toy/{lang}`` split for split (as UD v2.3 in ``releases``), so the PUD folders hold
  its test sets: the toy world has no parallel treebank, so the PUD sentences of two languages
  are NOT translations of each other as the real PUD's are (fine for a download and an import,
  not for Muller et al.'s similarity analysis).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from xling.contracts import layout
from xling.contracts.conllu import read_conllu

from .api import DATASET
from .releases import _lines, _tgz, write_files
from .schema import SPLITS

TATOEBA_DIR = "facebookresearch/LASER/main/data/tatoeba/v1"
TATOEBA_ENGLISH = "eng"
FASTTEXT_DIR = "fasttext/vectors-wiki"
FASTTEXT_DIM = 300  # the published vectors' dimension
FASTTEXT_MIN_COUNT = 5  # fastText's default minCount
FASTTEXT_DIGITS = 5  # fastText writes each value with std::setprecision(5)
FASTTEXT_LINE_END = "</s>"  # fastText's dictionary counts a line end as this word
UD24_DOWNLOAD = "ud24"  # the name of the release in config data.downloads
UD24_RELEASE = "ud-treebanks-v2.4"
UD24_TGZ = f"{UD24_RELEASE}.tgz"

_WORD = re.compile(r"\w+(?:['’-]\w+)*|[^\w\s]")


def tatoeba_file(code: str, side: str) -> str:
    """LASER's file of one side (``code`` or ``eng``) of the pair ``code``-English."""
    return f"{TATOEBA_DIR}/tatoeba.{code}-{TATOEBA_ENGLISH}.{side}"


def fasttext_file(lang: str) -> str:
    return f"{FASTTEXT_DIR}/wiki.{lang}.vec"


def write_analysis_releases(
    toyworld_dir: Path,
    out_dir: Path,
    *,
    languages: Sequence[str],
    tatoeba_codes: Mapping[str, str],
    ud_datasets: Mapping[str, Mapping],
    ud_download: str = UD24_DOWNLOAD,
    dim: int = FASTTEXT_DIM,
) -> dict[str, Path]:
    """Write the Tatoeba, fastText and UD v2.4 files of ``languages`` under ``out_dir``; return
    relative path -> path.

    ``tatoeba_codes`` is config ``data.tatoeba.codes``; ``ud_datasets`` config ``data.ud`` (only
    the datasets with ``download: <ud_download>`` are read); ``dim`` the vectors' dimension.
    """
    toy = Path(toyworld_dir)
    files = tatoeba_files(toy, languages, tatoeba_codes)
    for lang in languages:
        files[fasttext_file(lang)] = fasttext_vec(_lines(toy / layout.corpus("wiki", lang)),
                                                  lang, dim, gold_words(toy, lang))  # fmt: skip
    files[UD24_TGZ] = ud24_tgz(toy, ud24_treebanks(ud_datasets, languages, ud_download))
    return write_files(files, out_dir)


# --- Tatoeba -----------------------------------------------------------------------------------


def tatoeba_files(
    toy: Path, languages: Sequence[str], codes: Mapping[str, str]
) -> dict[str, bytes]:
    """Both sides of each pair English-``lang`` that LASER has a code for, as the toy world has
    them (already one sentence a line, line-aligned)."""
    files = {}
    for lang in languages:
        if lang == "en" or lang not in codes:
            continue
        code = codes[lang]
        files[tatoeba_file(code, code)] = (toy / layout.tatoeba("en", lang, lang)).read_bytes()
        english = (toy / layout.tatoeba("en", lang, "en")).read_bytes()
        files[tatoeba_file(code, TATOEBA_ENGLISH)] = english
    return files


# --- fastText ----------------------------------------------------------------------------------


def gold_words(toy: Path, lang: str) -> set[str]:
    """The word forms of the toy world's gold-segmented files of ``lang`` (parallel words, UD)."""
    words = {w for line in _lines(toy / layout.parallel_words(lang)) for w in line.split()}
    for path in sorted((toy / "ud").glob(f"*/{lang}/*.conllu")):
        words.update(word for sentence in read_conllu(path) for word in sentence.words)
    return words


def tokens(sentence: str, lexicon: set[str] | None = None) -> list[str]:
    """The words and punctuation of ``sentence``. Without spaces between words (``lexicon`` given,
    zh), each run of letters is cut greedily into the longest words of ``lexicon``, a character a
    word (a run of digits a number) where none matches: the published Chinese vectors' text was
    segmented too."""
    if lexicon is None:
        return _WORD.findall(sentence)
    longest = max(map(len, lexicon), default=1)
    out: list[str] = []
    for run in re.findall(r"\w+|[^\w\s]", sentence):
        start = 0
        while start < len(run):
            end = next(
                (end for end in range(min(len(run), start + longest), start, -1)
                 if run[start:end] in lexicon),
                None,
            )  # fmt: skip
            if end is None:
                digits = re.match(r"\d+", run[start:])
                end = start + (len(digits.group()) if digits else 1)
            out.append(run[start:end])
            start = end
    return out


def word_counts(sentences: Iterable[str], lexicon: set[str] | None = None) -> list[tuple[str, int]]:
    """fastText's dictionary of ``sentences``: (word, count), most frequent first (ties in order of
    first occurrence), ``</s>`` once a line, words under FASTTEXT_MIN_COUNT dropped."""
    counts: Counter[str] = Counter()
    for sentence in sentences:
        counts.update(tokens(sentence, lexicon))
        counts[FASTTEXT_LINE_END] += 1
    order = {word: rank for rank, word in enumerate(counts)}
    kept = [(word, n) for word, n in counts.items() if n >= FASTTEXT_MIN_COUNT]
    return sorted(kept, key=lambda item: (-item[1], order[item[0]]))


def _seed(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256(" ".join(parts).encode()).digest()[:8], "big")


def fasttext_vec(
    sentences: Sequence[str], lang: str, dim: int = FASTTEXT_DIM, lexicon: set[str] | None = None
) -> bytes:
    """A ``wiki.{lang}.vec`` of ``sentences`` (``lexicon`` only matters without spaces)."""
    spaced = any(" " in sentence for sentence in sentences)
    words = [word for word, _ in word_counts(sentences, None if spaced else (lexicon or set()))]
    rng = np.random.default_rng(_seed("fasttext wiki", lang))
    matrix = rng.normal(0.0, 0.2, size=(len(words), dim)).astype(np.float32)
    lines = [f"{len(words)} {dim}\n"]
    for word, row in zip(words, matrix.tolist(), strict=True):
        values = "".join(f"{value:.{FASTTEXT_DIGITS}g} " for value in row)
        lines.append(f"{word} {values}\n")
    return "".join(lines).encode("utf-8")


# --- UD v2.4 -----------------------------------------------------------------------------------


def ud24_treebanks(
    ud_datasets: Mapping[str, Mapping], languages: Sequence[str], download: str = UD24_DOWNLOAD
) -> dict[str, tuple[str, list[str]]]:
    """Folder -> (language, splits) of every treebank that a dataset of config ``data.ud``
    downloading ``download`` names for one of ``languages``; splits in the order train, dev, test
    (all three unless the dataset lists ``splits``; the union when two datasets share a folder)."""
    treebanks: dict[str, tuple[str, list[str]]] = {}
    for dataset in ud_datasets.values():
        if dataset.get("download") != download:
            continue
        wanted = dataset.get("splits", SPLITS)
        for lang, folder in dataset["treebanks"].items():
            if lang in languages:
                _, before = treebanks.get(folder, (lang, []))
                splits = [s for s in SPLITS if s in wanted or s in before]
                treebanks[folder] = (lang, splits)
    return dict(sorted(treebanks.items()))


def _sentence_texts(conllu: str) -> str:
    """A treebank's raw text (UD's ``-ud-{split}.txt``), a sentence a line."""
    prefix = "# text = "
    texts = [line[len(prefix) :] for line in conllu.splitlines() if line.startswith(prefix)]
    return "".join(f"{text}\n" for text in texts)


def ud24_tgz(toy: Path, treebanks: Mapping[str, tuple[str, Sequence[str]]]) -> bytes:
    """The release: in each folder ``{lang}_{name}-ud-{split}.conllu`` (UD_English-PUD: en_pud)
    and its ``.txt``, from the toy world's ``ud/toy/{lang}/{split}.conllu``."""
    members = {}
    for folder, (lang, splits) in treebanks.items():
        prefix = f"{lang}_{folder.rsplit('-', 1)[-1].lower()}"
        members[f"{UD24_RELEASE}/{folder}/README.md"] = f"# {folder}\n\nA toy treebank.\n".encode()
        for split in splits:
            conllu = (toy / layout.ud(DATASET, lang, split)).read_bytes()
            base = f"{UD24_RELEASE}/{folder}/{prefix}-ud-{split}"
            members[f"{base}.conllu"] = conllu
            members[f"{base}.txt"] = _sentence_texts(conllu.decode("utf-8")).encode("utf-8")
    return _tgz(members)
