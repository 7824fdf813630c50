"""XNLI: import the released files and derive the multi-way parallel sentences (Wu §5.2).

XNLI-1.0 dev/test hold every language in one tsv; the same ``promptID`` (premise) and ``pairID``
(hypothesis) across languages are translations of each other, which makes them multi-way parallel.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from xling.base.atomic import atomic_open
from xling.contracts.xnli import XNLI_MT_COLUMNS, XNLI_REQUIRED, check_nli_labels, tsv_rows


def _find(root: Path, name: str) -> Path:
    matches = sorted(root.rglob(name))
    if not matches:
        raise FileNotFoundError(f"{name} not found under {root}: is the archive the right release?")
    return matches[0]


def import_xnli(
    xnli_dir: str | Path, xnli_mt_dir: str | Path, dev: Path, test: Path, train: Path
) -> None:
    """Copy the three files the study reads from the unpacked XNLI-1.0 and XNLI-MT-1.0."""
    for name, dest, root, required, label in (
        ("xnli.dev.tsv", dev, Path(xnli_dir), XNLI_REQUIRED, "gold_label"),
        ("xnli.test.tsv", test, Path(xnli_dir), XNLI_REQUIRED, "gold_label"),
        ("multinli.train.en.tsv", train, Path(xnli_mt_dir), XNLI_MT_COLUMNS, "label"),
    ):
        source = _find(root, name)
        check_nli_labels(source, required, label)  # every line, before the copy
        with atomic_open(dest, "wb") as out, open(source, "rb") as handle:
            shutil.copyfileobj(handle, out)


def parallel_sentences(
    tsv_paths: Sequence[str | Path], languages: Sequence[str]
) -> dict[str, list[str]]:
    """Sentences present in every language, in one fixed order: premises, then hypotheses.

    A premise appears once per hypothesis in the file; it is kept once (keyed by promptID).
    """
    by_lang: dict[str, dict[tuple, str]] = {lang: {} for lang in languages}
    for split, path in enumerate(tsv_paths):
        for _, row in tsv_rows(path, XNLI_REQUIRED):
            lang = row["language"]
            if lang in by_lang:
                by_lang[lang][(split, 0, row["promptID"])] = row["sentence1"]
                by_lang[lang][(split, 1, row["pairID"])] = row["sentence2"]
    missing = [lang for lang in languages if not by_lang[lang]]
    if missing:
        raise ValueError(f"no XNLI rows for language(s) {missing} in {list(map(str, tsv_paths))}")
    common = set.intersection(*(set(sentences) for sentences in by_lang.values()))
    order = sorted(common, key=lambda k: (k[0], k[1], int(k[2]) if k[2].isdigit() else k[2]))
    return {lang: [by_lang[lang][key] for key in order] for lang in languages}


def write_parallel(tsv_paths: Sequence[str | Path], outputs: dict[str, str | Path]) -> int:
    """Write one line-aligned file per language; returns the number of lines."""
    sentences = parallel_sentences(tsv_paths, list(outputs))
    for lang, path in outputs.items():
        with atomic_open(path) as out:
            out.writelines(s.replace("\n", " ") + "\n" for s in sentences[lang])
    return len(next(iter(sentences.values())))
