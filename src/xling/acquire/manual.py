"""The files a user puts under ``data.manual_dir`` by hand, and the check that names the missing
ones while Snakemake plans, before any job is submitted.

Some inputs cannot be downloaded (licence, or no stable address): WikiANN, CoNLL 2003 and Levow
(2006) NER, the LexNorm tweet treebank, the en' paraphrases. Their import rules take the files
that exist as inputs (so replacing one reruns its import) and report the missing ones here, once
each, on Snakemake's output: a dry run (`snakemake -n`) lists everything still to provide, and
the plan is still built, so the rest of the study can run meanwhile.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

# NER dataset -> split -> file under manual_dir ({lang} filled in), and how to get the files.
NER_FILES = {
    "wikiann": {split: "wikiann/{lang}/" + split for split in ("train", "dev", "test")},
    "conll2003": {"train": "conll2003/eng.train", "dev": "conll2003/eng.testa",
                  "test": "conll2003/eng.testb"},
    "levow2006": {"train": "levow2006/train.txt", "test": "levow2006/test.txt"},
}  # fmt: skip
# The datasets of one language (their files name no {lang}).
NER_LANGUAGE = {"conll2003": "en", "levow2006": "zh"}
NER_HOWTO = {
    "wikiann": "wikiann/{lang}/{{train,dev,test}} (the Rahimi et al. 2019 split, "
    "'lang:word<TAB>tag'; XTREME distributes it as panx_dataset)",
    "conll2003": "conll2003/eng.train, eng.testa (dev), eng.testb (test) (CoNLL 2003 English)",
    "levow2006": "levow2006/train.txt, test.txt (SIGHAN 2006 MSRA NER, one character a line)",
}
UD_FILE = "{dataset}/{lang}/{split}.conllu"
PARAPHRASES_FILE = "parallel/{lang}.txt"


def ner_files(dataset: str, lang: str, manual_dir: str | Path) -> dict[str, Path]:
    """Split -> the file of one language of a hand-provided NER dataset."""
    if dataset not in NER_FILES:
        raise ValueError(f"unknown NER dataset {dataset!r}; known: {sorted(NER_FILES)}")
    return {
        split: Path(manual_dir) / name.format(lang=lang)
        for split, name in NER_FILES[dataset].items()
    }


def ud_files(dataset: str, lang: str, splits: Iterable[str], manual_dir: str | Path) -> list[Path]:
    return [
        Path(manual_dir) / UD_FILE.format(dataset=dataset, lang=lang, split=split)
        for split in splits
    ]


def paraphrase_file(lang: str, manual_dir: str | Path) -> Path:
    return Path(manual_dir) / PARAPHRASES_FILE.format(lang=lang)


class MissingFiles:
    """Reports the missing files of each dataset once per Snakemake run; returns those present."""

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream
        self.reported: set[str] = set()

    def present(self, paths: Iterable[Path], what: str, howto: str) -> list[str]:
        """The paths that exist (as strings, for a rule's input); one line names the others."""
        paths = list(paths)
        missing = [str(path) for path in paths if not path.is_file()]
        if missing and what not in self.reported:
            self.reported.add(what)
            print(
                f"Hand-provided files missing for {what}: {', '.join(missing)}. Put them there "
                f"({howto}); until then the job that imports them fails, and what needs it waits.",
                file=self.stream or sys.stderr,
            )
        return [str(path) for path in paths if path.is_file()]
