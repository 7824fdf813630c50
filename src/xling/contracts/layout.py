"""Where each study input lives under ``R/data/`` (docs/contracts.md, section 1): the one
definition, for the workflow, the acquisition stage and the toy world.

Every function returns a path relative to ``R/data/`` (callers prefix it: ``f"{R}/data/{path}"``).
Standard library only, so that the Snakefile can import it at parse time.
"""

from __future__ import annotations

from collections.abc import Iterable

# Every task with a data layout: Wu's Table 1 tasks and Muller et al.'s POS tagging, which reads
# the parsing treebanks (``ud/{dataset}/{lang}/{split}.conllu``).
TASKS = ("xnli", "ner", "parsing", "pos")
TASK_SPLITS = ("train", "dev", "test")  # task data says dev, as the real data sets do
XNLI_EVAL_SPLITS = ("dev", "test")


def corpus(domain: str, lang: str) -> str:
    """Raw monolingual text of one domain (``wiki`` or ``cc``), one sentence or paragraph a line."""
    return f"corpus/{domain}/{lang}.txt"


def parallel(lang: str) -> str:
    """Multi-way parallel raw sentences: line i of every language has the same meaning."""
    return f"parallel/{lang}.txt"


def parallel_words(lang: str) -> str:
    """The parallel sentences as gold words (the toy world only)."""
    return f"parallel/{lang}.words.txt"


def alignment(src: str, tgt: str) -> str:
    """Gold word alignments of the parallel sentences, Pharaoh format (the toy world only)."""
    return f"parallel/align/{src}-{tgt}.txt"


def segmenter_dictionary(lang: str) -> str:
    """The words of a language written without spaces, one a line, in jieba's user dictionary
    format (the toy world only: its words are in no segmenter's dictionary)."""
    return f"segmenter/{lang}.dict.txt"


def ner(dataset: str, lang: str, split: str) -> str:
    """NER sentences in the WikiAnn format; ``split`` is ``train``, ``dev`` or ``test``."""
    return f"ner/{dataset}/{lang}/{split}.txt"


def ud(dataset: str, lang: str, split: str) -> str:
    """A CoNLL-U treebank; ``split`` is ``train``, ``dev`` or ``test``."""
    return f"ud/{dataset}/{lang}/{split}.conllu"


def xnli(split: str) -> str:
    """XNLI-1.0 dev or test: every language in one file."""
    if split not in XNLI_EVAL_SPLITS:
        raise ValueError(f"XNLI-1.0 has no {split!r} file; use dev or test (train: xnli_train())")
    return f"xnli/xnli.{split}.tsv"


def xnli_train() -> str:
    """The XNLI-MT-1.0 English training file (XNLI has no training data in other languages)."""
    return "xnli/multinli.train.en.tsv"


def muse(src: str, tgt: str, split: str) -> str:
    """A MUSE dictionary from ``src`` to ``tgt``; ``split`` is ``train`` (0-5000) or ``test``."""
    return f"muse/{src}-{tgt}.{split}.txt"


def tatoeba(src: str, tgt: str, lang: str) -> str:
    """The ``lang`` side (``src`` or ``tgt``) of a pair's line-aligned Tatoeba sentences."""
    return f"tatoeba/{src}-{tgt}.{lang}.txt"


def task_files(task: str, dataset: str | None, lang: str, splits: Iterable[str]) -> dict[str, str]:
    """Split -> data file of ``task`` in ``lang``, for the splits asked for.

    ``dataset`` is the config's dataset for the task and language (``tasks.<task>.datasets``); XNLI
    has one dataset and ignores it (pass None).

    Raises:
        ValueError: an XNLI train split in a language other than English, an unknown split of
            XNLI, no dataset for NER, parsing or POS, or an unknown task.
    """
    splits = list(splits)
    if task == "xnli":
        if "train" in splits and lang != "en":
            raise ValueError(
                f"XNLI has English training data only; there is no {lang} training file"
            )
        return {split: xnli_train() if split == "train" else xnli(split) for split in splits}
    if task not in TASKS:
        raise ValueError(f"task {task!r} has no data layout; known: {', '.join(TASKS)}")
    if dataset is None:
        raise ValueError(f"task {task!r} needs a dataset name (config tasks.{task}.datasets)")
    path = ner if task == "ner" else ud  # parsing and POS read the same treebanks
    return {split: path(dataset, lang, split) for split in splits}
