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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from xling.base.atomic import atomic_directory, atomic_open
from xling.base.errors import EmptyCorpusError, SettingsError
from xling.base.fileio import StrPath, iter_lines, iter_text
from xling.preprocess.pipeline import TextPipeline
from xling.vocab.anchors import anchor_statistics
from xling.vocab.binarize import (
    CorpusCounts,
    Int32NpyWriter,
    corpus_counts,
    encode_lines,
    npy_int32_writer,
)
from xling.vocab.bpe import corpus_alphabet, learn_bpe, make_bpe_applier
from xling.vocab.codes import Merge, emittable_pieces
from xling.vocab.codeswitch import CodeSwitchSettings, codeswitch_file
from xling.vocab.collect import PieceCollector
from xling.vocab.sampling import language_seed, write_bpe_sample
from xling.vocab.settings import SCHEMES, VocabSettings
from xling.vocab.tokenizer import (
    EOS_ID,
    SPECIAL_TOKENS,
    UNK_ID,
    LanguageSetup,
    SubwordTokenizer,
)

JOINT_CODES = "joint"
_ONE_BPE_SCHEMES = ("joint", "codeswitch")
_READ_IDS = 1 << 24


@dataclass(frozen=True)
class _CheckedInputs:
    """The arguments of one build once checked: nothing is written before they are."""

    scheme: str
    languages: list[str]
    pipelines: dict[str, TextPipeline]
    requested_merges: dict[str, int]
    codeswitch: CodeSwitchSettings | None


@dataclass(frozen=True)
class _LearnedBpe:
    """The BPE codes of one build and which language uses which."""

    codes: dict[str, list[Merge]]  # codes name (a language, or JOINT_CODES) -> merges
    codes_of: dict[str, str]  # language -> the codes name it uses
    sample_lines: dict[str, int]  # language -> lines of the sample BPE learned on


@dataclass(frozen=True)
class _Binarized:
    """What binarizing the corpora counted: per language and split, sentences and tokens; per
    language, how often its training corpus uses each token id (for the anchor statistics)."""

    corpus: dict[str, dict[str, CorpusCounts]]
    train_token_counts: dict[str, np.ndarray]


def build_vocabulary(
    scheme: str,
    out_dir: StrPath,
    *,
    corpora: Mapping[str, Mapping[str, StrPath]],
    pipelines: Mapping[str, TextPipeline | Mapping[str, Any]],
    settings: VocabSettings,
    dictionaries: Mapping[str, StrPath] | None = None,
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
        settings: merges, BPE sample and backend, seed, code-switching
            (:meth:`VocabSettings.from_config` reads them from the study config).
        dictionaries: required by the ``codeswitch`` scheme: direction ``"{src}-{tgt}"`` ->
            bilingual dictionary file (see :class:`CodeSwitchSettings`).
        pair, domains: labels copied into ``stats.json`` (for the anchors table).

    Returns:
        The content of ``stats.json``.

    Raises:
        SettingsError: inconsistent arguments (unknown scheme, missing language...).
        EmptyCorpusError: a training corpus without a non-empty line (nothing is written).
    """
    checked = _check_inputs(scheme, corpora, pipelines, settings, dictionaries)
    # built under a temporary name: a killed job leaves no folder that looks complete
    with atomic_directory(out_dir) as out:
        with tempfile.TemporaryDirectory(dir=out, prefix=".work-") as work_dir:
            work = Path(work_dir)
            train, switched = _training_corpora(corpora, checked, settings.seed, work)
            bpe = _learn_codes(checked, train, settings, work)
            tokenizer, order, train_counts = _build_tokenizer(
                checked, train, bpe, settings.backend, work
            )
            tokenizer.save(out / "tokenizer")
            binarized = _binarize_corpora(tokenizer, corpora, order, train_counts, work, out)
        stats = _stats(
            checked,
            settings,
            bpe,
            binarized,
            vocab_size=tokenizer.vocab_size,
            switched=switched,
            pair=pair,
            domains=domains,
        )
        _write_stats(out / "stats.json", stats)
    return stats


def _check_inputs(
    scheme: str,
    corpora: Mapping[str, Mapping[str, StrPath]],
    pipelines: Mapping[str, TextPipeline | Mapping[str, Any]],
    settings: VocabSettings,
    dictionaries: Mapping[str, StrPath] | None,
) -> _CheckedInputs:
    """Check every argument and corpus file before anything is written."""
    pipelines = {
        lang: pipeline if isinstance(pipeline, TextPipeline) else TextPipeline.from_dict(pipeline)
        for lang, pipeline in pipelines.items()
    }
    if scheme not in SCHEMES:
        raise SettingsError(f"unknown vocabulary scheme {scheme!r}; choose one of {SCHEMES}")
    languages = list(corpora)
    if not languages:
        raise SettingsError("build_vocabulary needs at least one language")
    codeswitch = None
    if scheme == "codeswitch":
        if dictionaries is None or len(languages) < 2:
            raise SettingsError("the codeswitch scheme needs two languages and dictionary files")
        codeswitch = settings.codeswitch_settings(dictionaries)
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
    requested = _merges_per_codes(scheme, settings.merges, languages)
    return _CheckedInputs(scheme, languages, pipelines, requested, codeswitch)


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


def _training_corpora(
    corpora: Mapping[str, Mapping[str, StrPath]],
    checked: _CheckedInputs,
    seed: int,
    work: Path,
) -> tuple[dict[str, Path], dict[str, Any] | None]:
    """The text BPE and the training ``.npy`` are made from: the training corpora, or their
    code-switched copies in ``work`` (with what code-switching did, for ``stats.json``)."""
    train = {lang: Path(corpora[lang]["train"]) for lang in checked.languages}
    if checked.codeswitch is None:
        return train, None
    return _codeswitch_corpora(train, checked.codeswitch, seed, work)


def _codeswitch_corpora(
    train: dict[str, Path], settings: CodeSwitchSettings, seed: int, work: Path
) -> tuple[dict[str, Path], dict[str, Any]]:
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


def _learn_codes(
    checked: _CheckedInputs, train: Mapping[str, Path], settings: VocabSettings, work: Path
) -> _LearnedBpe:
    """Sample the training text (seeded) and learn the joint BPE or one BPE per language."""
    requested = checked.requested_merges
    sentences, seed = settings.bpe_sentences_per_language, settings.seed
    backend, min_frequency = settings.backend, settings.min_frequency
    codes: dict[str, list[Merge]] = {}
    sample_lines: dict[str, int] = {}
    if checked.scheme in _ONE_BPE_SCHEMES:
        sample = work / "bpe-sample.joint.txt"
        sample_lines = write_bpe_sample(sample, train, sentences, seed=seed, upsample=True)
        codes[JOINT_CODES] = learn_bpe(
            [sample], requested[JOINT_CODES], backend=backend, min_frequency=min_frequency
        )
        return _LearnedBpe(codes, {lang: JOINT_CODES for lang in train}, sample_lines)
    for lang, path in train.items():
        sample = work / f"bpe-sample.{lang}.txt"
        sample_lines.update(
            write_bpe_sample(sample, {lang: path}, sentences, seed=seed, upsample=False)
        )
        codes[lang] = learn_bpe(
            [sample], requested[lang], backend=backend, min_frequency=min_frequency
        )
    return _LearnedBpe(codes, {lang: lang for lang in train}, sample_lines)


def _build_tokenizer(
    checked: _CheckedInputs,
    train: Mapping[str, Path],
    bpe: _LearnedBpe,
    backend: str,
    work: Path,
) -> tuple[SubwordTokenizer, list[int], dict[str, np.ndarray]]:
    """The tokenizer, the final order of the provisional piece ids, and the training counts by
    provisional id (the training corpora are segmented once, into ``work``)."""
    scheme = checked.scheme
    setups = {
        lang: LanguageSetup(
            checked.pipelines[lang],
            bpe.codes_of[lang],
            f"{lang}:" if scheme == "per_language_prefixed" else "",
        )
        for lang in train
    }
    collector, train_counts = _collect_training_pieces(train, setups, bpe.codes, backend, work)
    order, ranges = collector.layout(list(train), train_counts)
    tokenizer = SubwordTokenizer(
        scheme=scheme,
        vocab=[collector.pieces[index] for index in order],
        languages=setups,
        codes=bpe.codes,
        language_token_ranges=ranges,
        bpe_backend=backend,
    )
    return tokenizer, order, train_counts


def _collect_training_pieces(
    train: Mapping[str, Path],
    setups: Mapping[str, LanguageSetup],
    codes: Mapping[str, list[Merge]],
    backend: str,
    work: Path,
) -> tuple[PieceCollector, dict[str, np.ndarray]]:
    """Segment every training corpus once (provisional ids into ``work``) and record, per
    language, the pieces it used and the pieces its codes can emit over its alphabet."""
    collector = PieceCollector()
    train_counts = {}
    for lang, setup in setups.items():
        applier = make_bpe_applier(backend, codes[setup.codes])
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
) -> _Binarized:
    """Write every ``{lang}.{split}.npy``: training corpora by renumbering their provisional
    ids, the other splits by encoding them; returns their counts (training counts by final id)."""
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
    return _Binarized(corpus, final_counts)


def _remap_to_npy(ids_path: Path, new_id: np.ndarray, out_path: Path) -> CorpusCounts:
    """Rewrite provisional ids as final ids into a ``.npy``, in bounded memory."""
    with open(ids_path, "rb") as source, npy_int32_writer(out_path) as writer:
        arrays = (new_id[chunk] for chunk in _id_chunks(source))
        return corpus_counts(_written(arrays, writer), EOS_ID, UNK_ID)


def _id_chunks(handle) -> Iterator[np.ndarray]:
    while (chunk := np.fromfile(handle, dtype=np.int32, count=_READ_IDS)).size:
        yield chunk


def _stats(
    checked: _CheckedInputs,
    settings: VocabSettings,
    bpe: _LearnedBpe,
    binarized: _Binarized,
    *,
    vocab_size: int,
    switched: dict[str, Any] | None,
    pair: str | None,
    domains: str | None,
) -> dict[str, Any]:
    """The content of ``stats.json`` (contract section 3)."""
    return {
        "scheme": checked.scheme,
        "pair": pair or "-".join(checked.languages),
        "domains": domains,
        "languages": checked.languages,
        "vocab_size": vocab_size,
        "merges": {name: len(merges) for name, merges in bpe.codes.items()},
        "merges_requested": checked.requested_merges,
        "bpe": {
            "backend": settings.backend,
            "min_frequency": settings.min_frequency,
            "sentences_per_language": settings.bpe_sentences_per_language,
            "sample_lines": bpe.sample_lines,
        },
        "seed": settings.seed,
        "corpus": {
            lang: {split: counts.to_dict() for split, counts in splits.items()}
            for lang, splits in binarized.corpus.items()
        },
        "anchors": anchor_statistics(binarized.train_token_counts, len(SPECIAL_TOKENS)),
        "codeswitch": switched,
    }


def _write_stats(path: Path, stats: Mapping[str, Any]) -> None:
    with atomic_open(path) as handle:
        json.dump(stats, handle, indent=1, ensure_ascii=False)
        handle.write("\n")


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
