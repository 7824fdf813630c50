"""The four vocabulary schemes on generated corpora: outputs, anchors, errors."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from xling.base.errors import EmptyCorpusError, InputFileError, SettingsError
from xling.preprocess import TextPipeline
from xling.preprocess.synthetic import synthetic_sentences
from xling.vocab import (
    SPECIAL_TOKENS,
    SubwordTokenizer,
    VocabSettings,
    build_vocabulary,
    write_anchor_table,
)

LANGS = {"en": "latin", "ru": "cyrillic"}
SPLITS = ("train", "valid", "test")
PIPELINES = {lang: TextPipeline(lang, "moses") for lang in LANGS}


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    """Two tokenized corpora in different scripts sharing a few strings (numbers, names)."""
    root = tmp_path_factory.mktemp("corpora")
    files: dict[str, dict[str, object]] = {}
    vocabularies = {}
    for index, (lang, script) in enumerate(LANGS.items()):
        lines = synthetic_sentences(700, seed=index, n_types=1500, script=script)
        lines = [
            f"{line[:-2]} {k % 40} Zorblat ." if k % 4 == 0 else line
            for k, line in enumerate(lines)
        ]
        files[lang] = {}
        for split, part in zip(SPLITS, (lines[:600], lines[600:650], lines[650:]), strict=True):
            path = root / f"{lang}.{split}.txt"
            path.write_text("\n".join(part) + "\n", encoding="utf-8")
            files[lang][split] = path
        vocabularies[lang] = sorted({w for line in lines for w in line.split() if w.isalpha()})
    dictionary = root / "en-ru.train.txt"
    pairs = zip(vocabularies["en"][:300], vocabularies["ru"][:300], strict=True)
    dictionary.write_text("".join(f"{en}\t{ru}\n" for en, ru in pairs), encoding="utf-8")
    return files, dictionary


def _build(
    corpora, scheme, out_dir, *, files=None, pipelines=PIPELINES, dictionary=None, **changes
):
    """Build ``scheme`` from the test corpora; ``changes`` replace fields of the settings."""
    test_files, test_dictionary = corpora
    settings = VocabSettings(
        merges=300 if scheme in ("joint", "codeswitch") else 150,
        bpe_sentences_per_language=400,
        seed=3,
        batch_words=200 if scheme == "codeswitch" else None,
    )
    return build_vocabulary(
        scheme,
        out_dir,
        corpora=files or test_files,
        pipelines=pipelines,
        settings=dataclasses.replace(settings, **changes),
        dictionaries={"en-ru": dictionary or test_dictionary} if scheme == "codeswitch" else None,
        pair="en-ru",
        domains="wiki-wiki",
    )


@pytest.fixture(scope="module")
def built(corpora, tmp_path_factory):
    root = tmp_path_factory.mktemp("vocab")
    schemes = ("joint", "per_language", "per_language_prefixed", "codeswitch")
    return {scheme: (root / scheme, _build(corpora, scheme, root / scheme)) for scheme in schemes}


def _lines(path):
    return path.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("scheme", ["joint", "per_language", "per_language_prefixed", "codeswitch"])
def test_each_scheme_writes_the_contract(built, corpora, scheme) -> None:
    out, stats = built[scheme]
    files, _ = corpora
    assert json.loads((out / "stats.json").read_text(encoding="utf-8")) == stats
    assert not [path.name for path in out.iterdir() if path.name.startswith(".")]
    tokenizer = SubwordTokenizer.load(out / "tokenizer")
    assert tokenizer.vocab[:5] == list(SPECIAL_TOKENS) == _lines(out / "tokenizer/vocab.txt")[:5]
    assert tokenizer.vocab_size == stats["vocab_size"] == len(_lines(out / "tokenizer/vocab.txt"))
    assert tokenizer.languages == ("en", "ru")
    for lang in LANGS:
        assert tokenizer.pipeline(lang) == PIPELINES[lang]
        for split in SPLITS:
            ids = np.load(out / f"{lang}.{split}.npy")
            sentences = _lines(files[lang][split])
            counts = stats["corpus"][lang][split]
            assert ids.dtype == np.int32 and ids.ndim == 1
            assert ids[-1] == tokenizer.eos_id
            assert counts["sentences"] == len(sentences) == int((ids == tokenizer.eos_id).sum())
            assert counts["tokens"] == ids.size - counts["sentences"]
            if split != "train" or scheme != "codeswitch":  # only train is code-switched
                first = ids[: int(np.argmax(ids == tokenizer.eos_id))]
                assert first.tolist() == tokenizer.encode_tokenized(sentences[0], lang)
                assert tokenizer.decode(first) == sentences[0]
        assert stats["corpus"][lang]["train"]["unknown_tokens"] == 0


def test_joint_learns_one_bpe_with_the_requested_merges(built) -> None:
    out, stats = built["joint"]
    assert sorted(path.name for path in (out / "tokenizer").iterdir()) == [
        "joint.codes",
        "tokenizer.json",
        "vocab.txt",
    ]
    assert stats["merges"] == {"joint": 300}
    assert len(_lines(out / "tokenizer/joint.codes")) == 301
    assert stats["bpe"]["sample_lines"] == {"en": 400, "ru": 400}


def test_per_language_keeps_shared_strings_shared(built) -> None:
    out, stats = built["per_language"]
    tokenizer = SubwordTokenizer.load(out / "tokenizer")
    assert stats["merges"] == {"en": 150, "ru": 150}
    assert (out / "tokenizer/en.codes").is_file() and (out / "tokenizer/ru.codes").is_file()
    zorblat_en = tokenizer.encode_tokenized("Zorblat 8", "en")
    assert zorblat_en == tokenizer.encode_tokenized("Zorblat 8", "ru")
    assert stats["anchors"]["shared_types"] > 0
    en_ids, ru_ids = (set(tokenizer.language_token_ids(lang).tolist()) for lang in LANGS)
    assert set(zorblat_en) <= en_ids & ru_ids
    assert en_ids != ru_ids and en_ids | ru_ids == set(range(5, tokenizer.vocab_size))


def test_prefixed_vocabularies_share_nothing(built) -> None:
    out, stats = built["per_language_prefixed"]
    tokenizer = SubwordTokenizer.load(out / "tokenizer")
    assert stats["anchors"]["shared_types"] == 0
    assert stats["anchors"]["token_share"] == {"en": 0.0, "ru": 0.0}
    assert all(token.startswith(("en:", "ru:")) for token in tokenizer.vocab[5:])
    assert "en:8" in tokenizer.vocab and "ru:8" in tokenizer.vocab  # digits are prefixed too
    assert tokenizer.encode_tokenized("8", "en") != tokenizer.encode_tokenized("8", "ru")
    en_ids, ru_ids = (set(tokenizer.language_token_ids(lang).tolist()) for lang in LANGS)
    assert not en_ids & ru_ids
    # Same BPE as per_language, so the same number of types per language.
    assert stats["anchors"]["types"] == built["per_language"][1]["anchors"]["types"]


def test_code_switching_adds_anchors(built) -> None:
    _, stats = built["codeswitch"]
    _, joint = built["joint"]
    assert stats["anchors"]["shared_types"] > joint["anchors"]["shared_types"]
    for lang in LANGS:
        switched = stats["codeswitch"][lang]
        assert 0 < switched["replaced"] <= 0.15 * switched["words"]
        assert switched["max_batch_share"] <= 0.15
        assert stats["anchors"]["token_share"][lang] > joint["anchors"]["token_share"][lang]


def test_anchor_table(built, tmp_path) -> None:
    order = ("joint", "per_language", "per_language_prefixed", "codeswitch")
    rows = write_anchor_table([built[s][0] / "stats.json" for s in order], tmp_path / "anchors.csv")
    lines = _lines(tmp_path / "anchors.csv")
    assert lines[0] == (
        "pair,domains,scheme,src,tgt,vocab_size,src_types,tgt_types,shared_types,"
        "src_token_share,tgt_token_share"
    )
    assert [row["scheme"] for row in rows] == list(order)
    prefixed = rows[2]
    assert prefixed["shared_types"] == 0 and lines[3].startswith("en-ru,wiki-wiki,per_language_")
    for row, scheme in zip(rows, order, strict=True):
        anchors = built[scheme][1]["anchors"]
        assert row["shared_types"] == anchors["shared_types"]
        assert math.isclose(row["tgt_token_share"], anchors["token_share"]["ru"], abs_tol=1e-6)
    bad = tmp_path / "stats.json"
    bad.write_text("{}", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"not a vocabulary stats file"):
        write_anchor_table([bad], tmp_path / "broken.csv")


def test_subword_nmt_backend_and_per_language_merge_counts(corpora, tmp_path) -> None:
    stats = _build(
        corpora, "per_language", tmp_path, merges={"en": 120, "ru": 80}, backend="subword-nmt"
    )
    assert stats["merges"] == {"en": 120, "ru": 80}
    assert SubwordTokenizer.load(tmp_path / "tokenizer").bpe_backend == "subword-nmt"


def test_bad_inputs_leave_no_output(corpora, tmp_path) -> None:
    files, _dictionary = corpora
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(EmptyCorpusError, match=r"empty.txt"):
        _build(corpora, "joint", tmp_path / "a", files={**files, "ru": {"train": empty}})
    bad_dictionary = tmp_path / "bad-dictionary.txt"
    bad_dictionary.write_text("a b\nc\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"bad-dictionary.txt, line 2"):
        _build(corpora, "codeswitch", tmp_path / "b", dictionary=bad_dictionary, batch_words=10)
    for out in (tmp_path / "a", tmp_path / "b"):
        assert not out.exists() or list(out.iterdir()) == []
    with pytest.raises(SettingsError, match=r"one number of merges"):
        _build(corpora, "joint", tmp_path / "c", merges={"en": 1, "ru": 1})
    with pytest.raises(SettingsError, match=r"unknown vocabulary scheme"):
        _build(corpora, "shared", tmp_path / "d")
    with pytest.raises(SettingsError, match=r"no text pipeline given for language 'ru'"):
        _build(corpora, "joint", tmp_path / "e", pipelines={"en": PIPELINES["en"]})


def test_a_build_stopped_midway_leaves_no_folder_that_looks_complete(
    corpora, tmp_path, monkeypatch
) -> None:
    """The tokenizer and the first arrays are written before the last language's: a kill then
    must not leave them at the output path (Snakemake's ``--touch`` or a cleared incomplete
    marker would take the folder for finished)."""
    from xling.vocab import schemes

    def killed(tokenizer, corpora, order, counts, work, out):
        (out / "en.train.npy").write_bytes(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(schemes, "_binarize_corpora", killed)
    with pytest.raises(KeyboardInterrupt):
        _build(corpora, "joint", tmp_path / "vocab")
    assert list(tmp_path.iterdir()) == []
