"""Gold-annotated sentences in the real file formats (CoNLL-U, WikiAnn, Pharaoh, XNLI) and the
atomic writer every output goes through."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from ..atomic import atomic_open
from .realize import Token

XNLI_COLUMNS = (
    "language",
    "gold_label",
    "sentence1_binary_parse",
    "sentence2_binary_parse",
    "sentence1_parse",
    "sentence2_parse",
    "sentence1",
    "sentence2",
    "promptID",
    "pairID",
    "genre",
    "label1",
    "label2",
    "label3",
    "label4",
    "label5",
    "sentence1_tokenized",
    "sentence2_tokenized",
    "match",
)
XNLI_MT_COLUMNS = ("premise", "hypo", "label")
# XNLI-MT spells the third label differently from XNLI-1.0.
XNLI_MT_LABEL = {"entailment": "entailment", "neutral": "neutral", "contradiction": "contradictory"}


def words_line(tokens: list[Token]) -> str:
    """Gold words separated by one space."""
    return " ".join(t.form for t in tokens)


def conllu_block(tokens: list[Token], sent_id: str, text: str) -> str:
    """One CoNLL-U sentence (comments, 10 tab-separated columns, then an empty line)."""
    index = {id(t): i for i, t in enumerate(tokens, 1)}
    lines = [f"# sent_id = {sent_id}", f"# text = {text}"]
    last = len(tokens)
    for i, t in enumerate(tokens, 1):
        head = 0 if t.head is None else index[id(t.head)]
        misc = "SpaceAfter=No" if not t.space_after and i < last else "_"
        lines.append(
            f"{i}\t{t.form}\t{t.lemma}\t{t.upos}\t_\t{t.feats}\t{head}\t{t.deprel}\t_\t{misc}"
        )
    return "\n".join(lines) + "\n\n"


def ner_block(tokens: list[Token], lang: str) -> str:
    """One WikiAnn sentence: `{lang}:{word}<TAB>{tag}` per word, then an empty line."""
    return "".join(f"{lang}:{t.form}\t{t.ner}\n" for t in tokens) + "\n"


def alignment_line(source: list[Token], target: list[Token]) -> str:
    """Gold word alignment in Pharaoh format: words realizing the same meaning node and role."""
    by_key: dict[str, list[int]] = defaultdict(list)
    for j, t in enumerate(target):
        by_key[t.key].append(j)
    links = [f"{i}-{j}" for i, s in enumerate(source) for j in by_key.get(s.key, ())]
    return " ".join(links)


def xnli_row(
    lang: str,
    label: str,
    premise: tuple[str, str],
    hypothesis: tuple[str, str],
    prompt_id: int,
    pair_id: int,
    genre: str,
) -> str:
    """One XNLI-1.0 row. premise/hypothesis are (raw text, gold words joined by spaces).

    The parse columns stay empty (the toy world has no constituency parses); the five annotator
    labels all repeat the gold label.
    """
    cells = [
        lang,
        label,
        "",
        "",
        "",
        "",
        premise[0],
        hypothesis[0],
        str(prompt_id),
        str(pair_id),
        genre,
        *[label] * 5,
        premise[1],
        hypothesis[1],
        "True",
    ]
    return "\t".join(cells) + "\n"


def atomic_write(path: Path, chunks: Iterable[str]) -> None:
    """Write text to `path` through the project's atomic writer (a temporary file in the same
    directory, then one rename), so a reader never sees a half-written file."""
    with atomic_open(path) as handle:
        handle.writelines(chunks)
