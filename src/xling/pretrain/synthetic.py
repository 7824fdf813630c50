"""A synthetic vocab-stage directory for tests and benchmarks (``docs/contracts.md`` section 3).

Each language is generated from a small grammar directly in token ids, so that a masked LM has
something to learn beyond token frequencies: sentences are determiner-adjective-noun phrases around
a verb, with Zipfian word choice, a sentence topic that biases nouns and verbs, number agreement
(a plural noun takes a plural suffix, a plural determiner and a plural verb), and a word order per
language (SVO for even-numbered languages, SOV for odd). A share of the nouns are names with ids
common to all languages (the anchors); everything else is language-specific.

The toy world (``xling.toyworld``) is the study's real demo data; this generator exists so that the
pretraining engine can be tested and benchmarked without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np

from xling.base.atomic import atomic_open
from xling.pretrain.data import EOS_ID

SPECIAL_TOKENS = ["<pad>", "<unk>", "<s>", "</s>", "<mask>"]
# Word classes of one language and their sizes (verbs come in singular/plural pairs).
CLASS_SIZES = {"det": 6, "pdet": 6, "adj": 120, "noun": 360, "verb": 200, "pverb": 200, "prep": 12}
EXTRA = ["plural", "period"]
N_TOPICS = 16


@cache
def _zipf(n: int, s: float = 1.1) -> np.ndarray:
    weights = 1.0 / np.arange(1, n + 1) ** s
    return weights / weights.sum()


class _Language:
    def __init__(self, first_id, names, order_sov: bool, scale: float, rng: np.random.Generator):
        self.sizes = {name: max(2, round(size * scale)) for name, size in CLASS_SIZES.items()}
        self.sizes["pverb"] = self.sizes["verb"]  # singular and plural verbs pair up
        self.ids, next_id = {}, first_id
        for name, size in self.sizes.items():
            self.ids[name] = np.arange(next_id, next_id + size)
            next_id += size
        for name in EXTRA:
            self.ids[name] = np.array([next_id])
            next_id += 1
        self.end_id, self.names, self.order_sov = next_id, names, order_sov
        # Each topic favours its own random subset of nouns and verbs, on top of a global Zipf.
        self.topic_nouns = [rng.permutation(self.sizes["noun"]) for _ in range(N_TOPICS)]
        self.topic_verbs = [rng.permutation(self.sizes["verb"]) for _ in range(N_TOPICS)]

    def _pick(self, rng, name: str, topic_order=None) -> int:
        size = len(self.ids[name])
        rank = rng.choice(size, p=_zipf(size))
        index = topic_order[rank] if topic_order is not None and rng.random() < 0.6 else rank
        return int(self.ids[name][index])

    def _phrase(self, rng, topic: int) -> tuple[list[int], bool]:
        if rng.random() < 0.15:
            return [int(rng.choice(self.names))], False
        plural = rng.random() < 0.3
        words = [self._pick(rng, "pdet" if plural else "det")]
        if rng.random() < 0.4:
            words.append(self._pick(rng, "adj"))
        words.append(self._pick(rng, "noun", self.topic_nouns[topic]))
        if plural:
            words.append(int(self.ids["plural"][0]))
        return words, plural

    def sentence(self, rng) -> list[int]:
        topic = int(rng.integers(N_TOPICS))
        subject, plural = self._phrase(rng, topic)
        verbs = self.sizes["verb"]
        verb_rank = int(self.topic_verbs[topic][rng.choice(verbs, p=_zipf(verbs))])
        verb = int(self.ids["pverb" if plural else "verb"][verb_rank])
        obj, _ = self._phrase(rng, topic)
        words = subject + ([*obj, verb] if self.order_sov else [verb, *obj])
        if rng.random() < 0.3:
            words += [self._pick(rng, "prep"), *self._phrase(rng, topic)[0]]
        return [*words, int(self.ids["period"][0]), EOS_ID]


def write_synthetic_vocab_dir(
    out_dir: str | Path,
    languages: Sequence[str] = ("en", "fr"),
    *,
    sentences: dict[str, int] | None = None,
    anchors: int = 40,
    vocabulary_scale: float = 1.0,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """Write ``{lang}.{split}.npy`` and ``tokenizer/vocab.txt``; return each language's token ids.

    ``sentences`` maps a split to its sentence count per language (default: 4000 / 400 / 400);
    ``vocabulary_scale`` shrinks or grows every word class (1.0: about 900 ids per language).
    """
    sentences = sentences or {"train": 4000, "valid": 400, "test": 400}
    rng = np.random.default_rng(seed)
    out_dir = Path(out_dir)
    first = len(SPECIAL_TOKENS)
    names = np.arange(first, first + anchors)
    vocab = SPECIAL_TOKENS + [f"Name{i}" for i in range(anchors)]
    models, language_ids = {}, {}
    for index, lang in enumerate(languages):
        start = len(vocab)
        models[lang] = _Language(start, names, index % 2 == 1, vocabulary_scale, rng)
        vocab += [f"{lang}_{i}" for i in range(models[lang].end_id - start)]
        language_ids[lang] = np.concatenate([names, np.arange(start, models[lang].end_id)])
    with atomic_open(out_dir / "tokenizer" / "vocab.txt") as handle:
        handle.write("\n".join(vocab) + "\n")
    for lang, model in models.items():
        for split, count in sentences.items():
            ids = [i for _ in range(count) for i in model.sentence(rng)]
            with atomic_open(out_dir / f"{lang}.{split}.npy", "wb") as handle:
                np.save(handle, np.asarray(ids, dtype=np.int32))
    return language_ids
