"""The CKA tables of xling.analysis.similarity: what `analysis.cka.debiased` adds to the Table 1
variants' tables, and an undefined length-controlled CKA as an empty cell in every writer."""

import csv
import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from xling.analysis.cka import LENGTH, debiased_linear_cka, length_feature, linear_cka
from xling.analysis.loading import write_rows_csv
from xling.analysis.representations import framing, mean_pooled_layers
from xling.analysis.similarity import ComparedStates, cka_rows, figure7_rows
from xling.model import EncoderConfig, MLMEncoder
from xling.model.random_init import random_like

WORDS = ("zo", "ka", "lo", "mi", "qu", "ta", "ri", "se", "es", "ru", "na", "the", "a", "sees")


def _tokenizer():
    """A word-per-subword stand-in: what cka_rows asks of a tokenizer (ids and framing)."""
    vocabulary = {word: 5 + index for index, word in enumerate(WORDS)}
    return SimpleNamespace(
        eos_id=3,
        pad_id=0,
        encode_tokenized=lambda line, lang: [vocabulary[word] for word in line.split()],
    )


def _lines(rng, count):
    return [" ".join(rng.choice(WORDS, size=rng.integers(2, 7))) for _ in range(count)]


@pytest.fixture
def model():
    torch.manual_seed(0)
    config = EncoderConfig(
        vocab_size=30, languages=["en", "fr"], dim=16, layers=2, heads=2, ffn_dim=32
    )
    return MLMEncoder(config).eval()


def test_debiased_writes_the_debiased_cka_beside_the_biased_one(model, tmp_path):
    rng = np.random.default_rng(0)
    source, target = _lines(rng, 12), _lines(rng, 12)
    tokenizer = _tokenizer()
    plain = cka_rows(model, tokenizer, source, target, ("en", "fr"), 12, False, seed=0)
    both = cka_rows(model, tokenizer, source, target, ("en", "fr"), 12, True, seed=0)
    assert list(plain[0]) == ["encoder", "layer", "cka", "n_sentences"]
    assert list(both[0]) == ["encoder", "layer", "cka", "cka_debiased", "n_sentences"]
    # `cka` stays the biased CKA (what the cka_layers figure draws as "CKA")
    assert [row["cka"] for row in both] == [row["cka"] for row in plain]
    ids = [[tokenizer.encode_tokenized(line, "en") for line in source]]
    ids.append([tokenizer.encode_tokenized(line, "fr") for line in target])
    english = mean_pooled_layers(model, ids[0], "en", **framing(tokenizer))
    for encoder, other in (("trained", model), ("random", random_like(model, 0))):
        states = mean_pooled_layers(other, ids[1], "fr", **framing(tokenizer))
        rows = [row for row in both if row["encoder"] == encoder]
        assert [row["cka"] for row in rows] == pytest.approx(
            [linear_cka(x, y) for x, y in zip(english, states, strict=True)], abs=1e-12
        )
        assert [row["cka_debiased"] for row in rows] == pytest.approx(
            [debiased_linear_cka(x, y) for x, y in zip(english, states, strict=True)], abs=1e-12
        )
    assert all(row["cka_debiased"] != row["cka"] for row in both)
    # debiased: false writes the table it wrote before the key meant a column
    write_rows_csv(tmp_path / "plain.csv", plain)
    assert (tmp_path / "plain.csv").read_text().splitlines()[0] == "encoder,layer,cka,n_sentences"


def _distinct_lengths(rng, sentences):
    """States of ``sentences`` sentences whose lengths are all distinct: nothing is left of
    them once length is out."""
    lengths = rng.permutation(np.arange(3, 3 + sentences))
    layers = [rng.normal(size=(sentences, 4)) for _ in range(2)]
    return layers, lengths


def test_figure7_writes_an_undefined_length_controlled_cka_as_an_empty_cell(tmp_path):
    rng = np.random.default_rng(1)
    english, lengths = _distinct_lengths(rng, 20)
    other = [layer + rng.normal(size=layer.shape) for layer in english]
    states = {
        "monolingual": ComparedStates(english, other, lengths, lengths),
        LENGTH: ComparedStates(
            [length_feature(lengths)] * 2, [length_feature(lengths)] * 2, lengths, lengths
        ),
    }
    rows = figure7_rows(states)
    trained = [row for row in rows if row["encoder"] == "monolingual"]
    assert all(math.isnan(row["cka_length_controlled"]) for row in trained)
    assert all(0 < row["cka"] < 1 for row in trained)  # the CKA itself is defined
    path = tmp_path / "en-fr.csv"
    write_rows_csv(path, rows)
    with path.open() as handle:
        cells = [row["cka_length_controlled"] for row in csv.DictReader(handle)]
    assert cells == [""] * 4  # undefined (monolingual) and not applicable (the control) alike
    assert pd.read_csv(path)["cka_length_controlled"].isna().all()


def test_muller_similarity_writes_an_undefined_length_controlled_cka_as_an_empty_cell(tmp_path):
    from xling.muller.similarity import Pooled, write_similarity

    rng = np.random.default_rng(2)
    english, lengths = _distinct_lengths(rng, 20)
    french = [layer + rng.normal(size=layer.shape) for layer in english]
    pooled = Pooled({"en": english, "fr": french}, {"en": lengths, "fr": lengths})
    table, resamples = tmp_path / "similarity.csv", tmp_path / "similarity_resamples.csv"
    rows = write_similarity(table, resamples, pooled, ["en"], True, 3, seed=0, control=True)
    models = [row for row in rows if "model" not in row]
    assert len(models) == 2 and all(math.isnan(r["cka_length_controlled"]) for r in models)
    written = pd.read_csv(table, keep_default_na=False)
    assert set(written["cka_length_controlled"]) == {""}
    assert (written["cka"] != "").all() and (written["cka_debiased"] != "").all()


def test_table4_leaves_a_language_without_a_length_controlled_cka_out(tmp_path):
    from xling.analysis.spearman import gap_similarity_correlation

    base = {"experiment": "transfer", "task": "ner", "source": "en", "group": "ref", "seed": 1}
    test_scores = {"en": 0.9, "fr": 0.8, "de": 0.6, "ru": 0.5, "zh": 0.3}
    scores = pd.DataFrame(
        [base | {"evaluation": lang, "lang": lang, "split": "test", "score": score}
         for lang, score in test_scores.items()]
    )  # fmt: skip
    controlled = {"fr": 0.7, "de": 0.5, "ru": 0.4, "zh": math.nan}  # zh: every length distinct
    rows = []
    for model, task, seed in (("pretrained", "", 0), ("finetuned", "ner", 1)):
        for target, value in controlled.items():
            keys = {"model": model, "task": task, "group": "ref", "seed": seed, "source": "en"}
            rows.append(keys | {"target": target, "layer": 0, "cka": 0.5 + len(rows) / 100}
                        | {"cka_length_controlled": value})  # fmt: skip
    path = tmp_path / "similarity.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    similarity = pd.read_csv(path, keep_default_na=False, na_values=[""])
    result = gap_similarity_correlation(
        scores, similarity, tasks=["ner"], measure="cka_length_controlled"
    )
    assert list(result["n"]) == [3, 3] and set(result["languages"]) == {"fr de ru"}
    assert result["rho"].notna().all()
    assert list(gap_similarity_correlation(scores, similarity, tasks=["ner"])["n"]) == [4, 4]
