"""The vocabulary schemes of Table 1 (Wu, Conneau et al. 2020, section 4.2), for one pair.

* ``joint``: one BPE learned on a language-balanced sample of both training corpora (80k
  merges in the paper): the Default row.
* ``per_language``: one BPE per language (40k merges each in the paper); the vocabulary is the
  union, so identical strings stay shared: "Default anchors", and the Sep rows.
* ``per_language_prefixed``: the same BPEs, every token prefixed with ``{lang}:`` before the
  union, so no string is shared: "No anchors". Digits and punctuation are prefixed too (they
  come out of BPE like any token); only the five special tokens are shared, as the model needs
  one ``<pad>``, ``</s>``, ``<mask>``.
* ``codeswitch``: the training corpora are code-switched with a bilingual dictionary
  (:mod:`xling.vocab.codeswitch`), then treated as ``joint``: "Extra anchors". Valid and test
  stay untouched, so perplexities remain comparable across rows.

Output (contract section 3): ``tokenizer/``, ``{lang}.{split}.npy``, ``stats.json`` (last).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from xling.atomic import atomic_open
from xling.errors import EmptyCorpusError, SettingsError
from xling.fileio import StrPath, iter_lines, iter_text
from xling.preprocess.pipeline import TextPipeline
from xling.vocab.anchors import anchor_statistics
from xling.vocab.binarize import (
    CorpusCounts,
    Int32NpyWriter,
    corpus_counts,
    encode_lines,
    npy_int32_writer,
)
from xling.vocab.bpe import BPE_BACKENDS, corpus_alphabet, learn_bpe, make_bpe_applier
from xling.vocab.codes import Merge, emittable_pieces
from xling.vocab.codeswitch import CodeSwitchSettings, codeswitch_file
from xling.vocab.collect import PieceCollector
from xling.vocab.sampling import language_seed, write_bpe_sample
from xling.vocab.tokenizer import (
    EOS_ID,
    SPECIAL_TOKENS,
    UNK_ID,
    LanguageSetup,
    SubwordTokenizer,
)

SCHEMES = ("joint", "per_language", "per_language_prefixed", "codeswitch")
JOINT_CODES = "joint"
_ONE_BPE_SCHEMES = ("joint", "codeswitch")
_READ_IDS = 1 << 24


def build_vocabulary(
    scheme: str,
    out_dir: StrPath,
    *,
    corpora: Mapping[str, Mapping[str, StrPath]],
    pipelines: Mapping[str, TextPipeline | Mapping[str, Any]],
    merges: int | Mapping[str, int],
    bpe_sentences: int,
    seed: int,
    bpe_backend: str = "tokenizers",
    min_frequency: int = 2,
    codeswitch: CodeSwitchSettings | None = None,
    pair: str | None = None,
    domains: str | None = None,
) -> dict[str, Any]:
    """Build one scheme's vocabulary and binarized corpora for the languages of a pair.

    Args:
        scheme: one of :data:`SCHEMES`.
        out_dir: ``R/vocab/{pair}/{domains}/{scheme}``; receives ``tokenizer/``,
            ``{lang}.{split}.npy`` for every given split, and ``stats.json`` (written last).
        corpora: language -> split -> tokenized file (``R/preprocess/{domain}/{lang}.{split}.txt``);
            the mapping order is the language order (source first); ``train`` is required.
        pipelines: language -> the text pipeline that made its corpus (stored in the manifest),
            as a :class:`TextPipeline` or its ``to_dict()`` form.
        merges: ``joint``/``codeswitch``: one number; per-language schemes: one number for
            every language or a language -> number mapping.
        bpe_sentences: sentences per language in the sample BPE is learned on.
        seed: seeds the BPE sample and code-switching.
        bpe_backend: ``tokenizers`` (fast) or ``subword-nmt`` (reference), to learn and apply.
        min_frequency: pairs seen fewer times are not merged.
        codeswitch: required by the ``codeswitch`` scheme.
        pair, domains: labels copied into ``stats.json`` (for the anchors table).

    Returns:
        The content of ``stats.json``.

    Raises:
        SettingsError: inconsistent arguments (unknown scheme, missing language...).
        EmptyCorpusError: a training corpus without a non-empty line (nothing is written).
    """
    pipelines = {
        lang: pipeline if isinstance(pipeline, TextPipeline) else TextPipeline.from_dict(pipeline)
        for lang, pipeline in pipelines.items()
    }
    languages = _check_arguments(scheme, corpora, pipelines, bpe_sentences, bpe_backend, codeswitch)
    requested = _merges_per_codes(scheme, merges, languages)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out, prefix=".work-") as work_dir:
        work = Path(work_dir)
        train = {lang: Path(corpora[lang]["train"]) for lang in languages}
        switched = None
        if scheme == "codeswitch":
            assert codeswitch is not None
            train, switched = _codeswitch_corpora(train, codeswitch, seed, work)
        codes, codes_of, sample_lines = _learn_codes(
            scheme, train, requested, bpe_sentences, seed, bpe_backend, min_frequency, work
        )
        setups = {
            lang: LanguageSetup(
                pipelines[lang],
                codes_of[lang],
                f"{lang}:" if scheme == "per_language_prefixed" else "",
            )
            for lang in languages
        }
        collector, train_counts = _collect_training_pieces(train, setups, codes, bpe_backend, work)
        order, ranges = collector.layout(languages, train_counts)
        tokenizer = SubwordTokenizer(
            scheme=scheme,
            vocab=[collector.pieces[index] for index in order],
            languages=setups,
            codes=codes,
            language_token_ranges=ranges,
            bpe_backend=bpe_backend,
        )
        tokenizer.save(out / "tokenizer")
        corpus, final_counts = _binarize_corpora(tokenizer, corpora, order, train_counts, work, out)

    stats = {
        "scheme": scheme,
        "pair": pair or "-".join(languages),
        "domains": domains,
        "languages": languages,
        "vocab_size": tokenizer.vocab_size,
        "merges": {name: len(merges_) for name, merges_ in codes.items()},
        "merges_requested": requested,
        "bpe": {
            "backend": bpe_backend,
            "min_frequency": min_frequency,
            "sentences_per_language": bpe_sentences,
            "sample_lines": sample_lines,
        },
        "seed": seed,
        "corpus": {
            lang: {split: c.to_dict() for split, c in splits.items()}
            for lang, splits in corpus.items()
        },
        "anchors": anchor_statistics(final_counts, len(SPECIAL_TOKENS)),
        "codeswitch": switched,
    }
    with atomic_open(out / "stats.json") as handle:
        json.dump(stats, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
    return stats


def binarize_file(
    tokenizer: SubwordTokenizer, lang: str, in_path: StrPath, out_path: StrPath
) -> CorpusCounts:
    """Encode a tokenized corpus of ``lang`` into a ``.npy`` (``</s>`` after each sentence)."""
    arrays = encode_lines(
        iter_text([in_path]), lambda words: tokenizer.encode_tokenized_words(words, lang), EOS_ID
    )
    with npy_int32_writer(out_path) as writer:
        return corpus_counts(_written(arrays, writer), EOS_ID, UNK_ID)


def _written(arrays: Iterable[np.ndarray], writer: Int32NpyWriter) -> Iterator[np.ndarray]:
    """Pass arrays through, writing each one (so counting and writing share one pass)."""
    for array in arrays:
        writer.write(array)
        yield array


def _collect_training_pieces(
    train: Mapping[str, Path],
    setups: Mapping[str, LanguageSetup],
    codes: Mapping[str, list[Merge]],
    bpe_backend: str,
    work: Path,
) -> tuple[PieceCollector, dict[str, np.ndarray]]:
    """Segment every training corpus once (provisional ids into ``work``) and record, per
    language, the pieces it used and the pieces its codes can emit over its alphabet."""
    collector = PieceCollector()
    train_counts = {}
    for lang, setup in setups.items():
        applier = make_bpe_applier(bpe_backend, codes[setup.codes])
        train_counts[lang] = collector.encode(
            train[lang], applier.segment_new_words, setup.prefix, work / f"{lang}.train.ids"
        )
    for lang, setup in setups.items():
        pieces = emittable_pieces(codes[setup.codes], corpus_alphabet([train[lang]]))
        collector.mark(lang, (setup.prefix + piece for piece in sorted(pieces)))
    return collector, train_counts


def _binarize_corpora(
    tokenizer: SubwordTokenizer,
    corpora: Mapping[str, Mapping[str, StrPath]],
    order: list[int],
    train_counts: Mapping[str, np.ndarray],
    work: Path,
    out: Path,
) -> tuple[dict[str, dict[str, CorpusCounts]], dict[str, np.ndarray]]:
    """Write every ``{lang}.{split}.npy``: training corpora by renumbering their provisional
    ids, the other splits by encoding them. Also returns training counts by final id."""
    new_id = np.empty(len(order), dtype=np.int32)
    new_id[order] = np.arange(len(order), dtype=np.int32)
    corpus: dict[str, dict[str, CorpusCounts]] = {}
    final_counts = {}
    for lang in tokenizer.languages:
        ids_path = work / f"{lang}.train.ids"
        corpus[lang] = {"train": _remap_to_npy(ids_path, new_id, out / f"{lang}.train.npy")}
        counts = np.zeros(len(order), dtype=np.int64)
        counts[new_id[: train_counts[lang].size]] = train_counts[lang]
        final_counts[lang] = counts
        for split, path in corpora[lang].items():
            if split != "train":
                npy_path = out / f"{lang}.{split}.npy"
                corpus[lang][split] = binarize_file(tokenizer, lang, path, npy_path)
    return corpus, final_counts


def _remap_to_npy(ids_path: Path, new_id: np.ndarray, out_path: Path) -> CorpusCounts:
    """Rewrite provisional ids as final ids into a ``.npy``, in bounded memory."""
    with open(ids_path, "rb") as source, npy_int32_writer(out_path) as writer:
        arrays = (new_id[chunk] for chunk in _id_chunks(source))
        return corpus_counts(_written(arrays, writer), EOS_ID, UNK_ID)


def _id_chunks(handle) -> Iterator[np.ndarray]:
    while (chunk := np.fromfile(handle, dtype=np.int32, count=_READ_IDS)).size:
        yield chunk


def _check_arguments(
    scheme, corpora, pipelines, bpe_sentences, bpe_backend, codeswitch
) -> list[str]:
    if scheme not in SCHEMES:
        raise SettingsError(f"unknown vocabulary scheme {scheme!r}; choose one of {SCHEMES}")
    if bpe_backend not in BPE_BACKENDS:
        raise SettingsError(f"unknown BPE backend {bpe_backend!r}; choose one of {BPE_BACKENDS}")
    languages = list(corpora)
    if not languages:
        raise SettingsError("build_vocabulary needs at least one language")
    if scheme == "codeswitch" and (codeswitch is None or len(languages) < 2):
        raise SettingsError("the codeswitch scheme needs two languages and CodeSwitchSettings")
    if bpe_sentences < 1:
        raise SettingsError(f"bpe_sentences must be >= 1, not {bpe_sentences}")
    for lang in languages:
        if "train" not in corpora[lang]:
            raise SettingsError(f"no train corpus given for language {lang!r}")
        if lang not in pipelines:
            raise SettingsError(f"no text pipeline given for language {lang!r}")
        if pipelines[lang].lang != lang:
            raise SettingsError(f"the pipeline given for {lang!r} is for {pipelines[lang].lang!r}")
        for path in corpora[lang].values():
            if not Path(path).is_file():
                raise FileNotFoundError(f"{path}: corpus of {lang!r} not found; run preprocess")
        if not any(text.strip() for _, text in iter_lines(corpora[lang]["train"])):
            raise EmptyCorpusError(corpora[lang]["train"])
    return languages


def _merges_per_codes(
    scheme: str, merges: int | Mapping[str, int], languages: list[str]
) -> dict[str, int]:
    if scheme in _ONE_BPE_SCHEMES:
        if not isinstance(merges, int):
            raise SettingsError(f"the {scheme} scheme learns one BPE: give one number of merges")
        requested = {JOINT_CODES: merges}
    elif isinstance(merges, int):
        requested = {lang: merges for lang in languages}
    else:
        missing = [lang for lang in languages if lang not in merges]
        if missing:
            raise SettingsError(f"no number of merges given for {missing}")
        requested = {lang: int(merges[lang]) for lang in languages}
    if any(count < 0 for count in requested.values()):
        raise SettingsError(f"numbers of merges must be >= 0: {requested}")
    return requested


def _codeswitch_corpora(
    train: dict[str, Path], settings: CodeSwitchSettings, seed: int, work: Path
):
    languages = list(train)
    switched_train, stats = {}, {}
    for lang in languages:
        dictionary = settings.dictionary_for(lang, languages)
        if dictionary is None:
            switched_train[lang], stats[lang] = train[lang], None
            continue
        switched_train[lang] = work / f"{lang}.train.codeswitch.txt"
        stats[lang] = codeswitch_file(
            train[lang],
            switched_train[lang],
            dictionary,
            replace_prob=settings.replace_prob,
            max_changed_share=settings.max_changed_share,
            batch_words=settings.batch_words,
            seed=language_seed(seed, lang),
        ).to_dict()
    if all(value is None for value in stats.values()):
        raise SettingsError(
            f"no codeswitch dictionary matches the languages {languages}: give files for"
            f" directions such as {languages[0]}-{languages[1]}"
        )
    return switched_train, stats


def _learn_codes(scheme, train, requested, bpe_sentences, seed, backend, min_frequency, work):
    codes: dict[str, list[Merge]] = {}
    sample_lines: dict[str, int] = {}
    if scheme in _ONE_BPE_SCHEMES:
        sample = work / "bpe-sample.joint.txt"
        sample_lines = write_bpe_sample(sample, train, bpe_sentences, seed=seed, upsample=True)
        codes[JOINT_CODES] = learn_bpe(
            [sample], requested[JOINT_CODES], backend=backend, min_frequency=min_frequency
        )
        return codes, {lang: JOINT_CODES for lang in train}, sample_lines
    for lang, path in train.items():
        sample = work / f"bpe-sample.{lang}.txt"
        sample_lines.update(
            write_bpe_sample(sample, {lang: path}, bpe_sentences, seed=seed, upsample=False)
        )
        codes[lang] = learn_bpe(
            [sample], requested[lang], backend=backend, min_frequency=min_frequency
        )
    return codes, {lang: lang for lang in train}, sample_lines
