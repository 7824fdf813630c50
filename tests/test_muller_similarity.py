"""Muller et al.'s similarity: the length controls beside the CKA (the length-controlled CKA, and
the rows of the length alone), the released code's measure and pooling as options, and the CKA on
bootstrap resamples of the parallel sentences: one draw for every language, model and layer,
gathered beside similarity.csv, and the claims over the CKA curves facing them as the test-score
claims face their test sets'."""

import functools
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from tests.test_claims import muller_similarity
from xling.analysis.cka import (
    debiased_linear_cka,
    length_controlled_cka,
    length_feature,
    linear_cka,
    parallel_draws,
    rbf_cka,
    windowed_cka,
)
from xling.model import EncoderConfig, MLMEncoder
from xling.muller.collect import (
    RESAMPLE_COLUMNS,
    SIMILARITY_COLUMNS,
    similarity_resamples,
    similarity_rows,
    stale_similarity,
)
from xling.muller.runner import run_fingerprint
from xling.muller.similarity import (
    LENGTH,
    Pooled,
    SimilaritySettings,
    pooled_parallel,
    similarity_resample_rows,
    write_similarity,
)
from xling.muller.similarity import RESAMPLE_COLUMNS as RUN_RESAMPLE_COLUMNS
from xling.muller.similarity import similarity_rows as run_similarity_rows
from xling.report import claims
from xling.report.claims import NOT_SUPPORTED, SUPPORTED, Run


def _pooled(rng, n=40, layers=3):
    english = [rng.normal(size=(n, 4)) for _ in range(layers)]
    states = {
        "en": english,
        "fr": [e + rng.normal(size=e.shape) for e in english],
        "zh": [rng.normal(size=(n, 4)) for _ in range(layers)],
    }
    lengths = {lang: rng.integers(3, 9, size=n) for lang in states}
    return Pooled(states, lengths)


def test_each_resample_is_the_cka_of_the_drawn_sentences_in_every_language():
    rng = np.random.default_rng(21)
    pooled = _pooled(rng)
    rows = similarity_resample_rows(pooled, ["en"], 20, seed=5)
    assert rows == similarity_resample_rows(pooled, ["en"], 20, seed=5)  # a function of the seed
    assert rows != similarity_resample_rows(pooled, ["en"], 20, seed=6)
    assert len(rows) == 20 * 2 * 3  # replicates x targets x layers
    assert [row["replicate"] for row in rows] == sorted(row["replicate"] for row in rows)
    drawn = parallel_draws(5, "muller", 20, 40)[7]
    for target in ("fr", "zh"):  # the same sentences drawn for both targets
        row = next(r for r in rows if (r["replicate"], r["target"], r["layer"]) == (7, target, 2))
        assert row["cka"] == pytest.approx(
            linear_cka(pooled.states["en"][2][drawn], pooled.states[target][2][drawn]), rel=1e-10
        )
    assert similarity_resample_rows(pooled, ["en"], 0, seed=5) == []


def test_write_similarity_writes_the_table_and_its_resamples(tmp_path):
    rng = np.random.default_rng(22)
    pooled = _pooled(rng)
    table, resamples = tmp_path / "similarity.csv", tmp_path / "resamples.csv"
    rows = write_similarity(table, resamples, pooled, ["en"], False, 4, seed=1)
    assert len(pd.read_csv(table)) == len(rows) == 2 * 3
    assert list(pd.read_csv(resamples).columns) == RUN_RESAMPLE_COLUMNS
    assert len(pd.read_csv(resamples)) == 4 * 6
    write_similarity(table, resamples, pooled, ["en"], False, 0, seed=1)
    assert pd.read_csv(resamples).empty  # report.resamples: 0, a header alone


def _selected(tmp_path, group, resample_values=None):
    run_dir = tmp_path / group
    run_dir.mkdir()
    pd.DataFrame([{"source": "en", "target": "fr", "layer": 0, "cka": 0.5}]).to_csv(
        run_dir / "similarity.csv", index=False
    )
    if resample_values is not None:
        pd.DataFrame(
            [{"replicate": r, "source": "en", "target": "fr", "layer": 0, "cka": value}
             for r, value in enumerate(resample_values)]
        ).to_csv(run_dir / "similarity_resamples.csv", index=False)  # fmt: skip
    run = {"task": "pos", "source": "en", "group": group, "seed": 1, "dir": str(run_dir)}
    run["similarity"] = True
    return run, {}


def test_the_resamples_are_gathered_beside_similarity_csv_or_named_as_missing(tmp_path):
    pretrained = tmp_path / "pretrained_resamples.csv"
    pd.DataFrame(
        [{"replicate": r, "source": "en", "target": "fr", "layer": 0, "cka": 0.1 * r}
         for r in range(12)]
    ).to_csv(pretrained, index=False)  # fmt: skip
    selected = [_selected(tmp_path, "ref", [0.2] * 12), _selected(tmp_path, "1-2")]
    assert stale_similarity(selected) == [str(tmp_path / "1-2/similarity_resamples.csv")]
    selected = selected[:1]
    assert stale_similarity(selected) == []
    frame = similarity_resamples(selected, pretrained)
    assert list(frame.columns) == list(RESAMPLE_COLUMNS)
    assert list(frame["replicate"]) == sorted(frame["replicate"])  # as numbers: 2 before 10
    assert len(frame) == 24 and frame["replicate"].max() == 11
    tenth = frame[frame["replicate"] == 10].set_index("model")["cka"]
    assert tenth.to_dict() == {"pretrained": pytest.approx(1.0), "finetuned": 0.2}
    # the same rows, keys and models as similarity.csv
    assert len(similarity_rows(selected, tmp_path / "ref" / "similarity.csv")) == 2


@pytest.mark.parametrize(("noise", "verdict"), [(0.01, SUPPORTED), (0.3, NOT_SUPPORTED)])
def test_a_similarity_claim_faces_the_resampled_parallel_sentences(noise, verdict):
    # RANDOM-INIT of layers 1-2 lowers the CKA by 0.2 on the numbers; the resamples move every
    # curve by ``noise``: a small spread keeps the claim, a large one makes it luck
    rng = np.random.default_rng(23)
    frame = muller_similarity()
    resamples = pd.concat(
        [frame.assign(replicate=r, cka=frame["cka"] + rng.normal(0, noise, len(frame)))
         for r in range(200)]
    )  # fmt: skip
    claim = next(c for c in claims.CLAIMS if c.id == "muller-4.3-random-init-similarity")
    alone = claims.evaluate_claim(claim, Run({"muller_similarity": frame}))
    assert alone.verdict == SUPPORTED
    run = Run({"muller_similarity": frame, "muller_similarity_resamples": resamples})
    result = claims.evaluate_claim(claim, run)
    assert result.verdict == verdict, result.numbers
    share = result.numbers["share of 200 resamples of the parallel sentences where it holds"]
    assert share < 0.84 if verdict == NOT_SUPPORTED else share == 1.0


def test_a_table_is_read_once_for_every_claim_and_resample_that_reads_it():
    calls = []

    def reader(frame):
        calls.append(len(frame))
        return frame["cka"].sum()

    frame = muller_similarity()
    resamples = pd.concat([frame.assign(replicate=r, cka=frame["cka"] + r) for r in range(3)])
    run = Run({"muller_similarity": frame, "muller_similarity_resamples": resamples})
    assert run.view("muller_similarity", reader) == run.view("muller_similarity", reader)
    for _ in range(2):  # two claims reading the same resamples
        sums = [r.view("muller_similarity", reader) for r in run.resampled(["muller_similarity"])]
        assert sums == pytest.approx([frame["cka"].sum() + r * len(frame) for r in range(3)])
    assert len(calls) == 1 + 3


# ----------------------------------------------------------------------------- length controls
def test_each_row_has_its_length_controlled_cka_and_the_control_its_own_rows():
    rng = np.random.default_rng(31)
    pooled = _pooled(rng)
    rows = run_similarity_rows(pooled, ["en"], True, control=True)
    models = [row for row in rows if "model" not in row]
    control = [row for row in rows if row.get("model") == LENGTH]
    assert len(models) == len(control) == 2 * 3  # targets x layers, the control after
    assert rows == models + control
    lengths = pooled.lengths
    for row in models:
        x, y = pooled.states["en"][row["layer"]], pooled.states[row["target"]][row["layer"]]
        assert row["cka"] == linear_cka(x, y)
        assert row["cka_debiased"] == debiased_linear_cka(x, y)
        expected = length_controlled_cka(x, y, lengths["en"], lengths[row["target"]])
        assert row["cka_length_controlled"] == expected
    for target in ("fr", "zh"):
        feature = length_feature(lengths["en"]), length_feature(lengths[target])
        values = [(r["cka"], r["cka_debiased"]) for r in control if r["target"] == target]
        # every layer the same: the squared correlation of the two sides' lengths
        assert values == [(linear_cka(*feature), debiased_linear_cka(*feature))] * 3
        correlation = np.corrcoef(lengths["en"], lengths[target])[0, 1]
        assert values[0][0] == pytest.approx(correlation**2, rel=1e-10)
    assert all(row["cka_length_controlled"] is None for row in control)
    assert all(row["cka_debiased"] is None for row in run_similarity_rows(pooled, ["en"], False))


def test_states_that_are_their_lengths_alone_have_nothing_left_once_length_is_out():
    rng = np.random.default_rng(32)
    lengths = rng.integers(3, 9, size=40)
    positions = rng.normal(size=(10, 4))  # a mean of position vectors: a function of length
    only_length = np.stack([positions[:n].mean(axis=0) for n in lengths])
    pooled = Pooled(
        {"en": [only_length], "fr": [only_length + 1.0]}, {"en": lengths, "fr": lengths}
    )
    (row,) = run_similarity_rows(pooled, ["en"], False)
    assert row["cka"] == pytest.approx(1.0)
    assert row["cka_length_controlled"] == 0.0


def test_the_control_is_in_the_resamples_and_collected_as_model_length(tmp_path):
    rng = np.random.default_rng(33)
    pooled = _pooled(rng)
    table, resamples = tmp_path / "pretrained.csv", tmp_path / "pretrained_resamples.csv"
    write_similarity(table, resamples, pooled, ["en"], True, 5, seed=2, control=True)
    resampled = pd.read_csv(resamples)
    assert list(resampled.columns) == [*RUN_RESAMPLE_COLUMNS, "model"]
    length = resampled[resampled["model"] == LENGTH]
    assert len(length) == 5 * 2 * 3 and len(resampled) == 2 * len(length)
    drawn = parallel_draws(2, "muller", 5, 40)[3]
    row = length[(length["replicate"] == 3) & (length["target"] == "zh")]
    feature = length_feature(pooled.lengths["en"]), length_feature(pooled.lengths["zh"])
    expected = linear_cka(feature[0][drawn], feature[1][drawn])
    assert row["cka"].to_numpy() == pytest.approx([expected] * 3, rel=1e-9)
    # collected: the control is model `length`, as the pretrained model's rows are (no task,
    # group ref, seed 0), with an empty length-controlled CKA
    rows = pd.DataFrame(similarity_rows([], table))
    assert list(rows.columns) == list(SIMILARITY_COLUMNS)
    assert rows["model"].value_counts().to_dict() == {"pretrained": 6, LENGTH: 6}
    control = rows[rows["model"] == LENGTH]
    assert set(control["task"]) == {""} and set(control["group"]) == {"ref"}
    assert set(control["seed"]) == {0} and set(control["cka_length_controlled"]) == {""}
    collected = similarity_resamples([], resamples)
    assert collected["model"].value_counts().to_dict() == {"pretrained": 30, LENGTH: 30}
    # what the claims read: per pair, one number
    frame = rows.astype({"cka": float})
    means = frame[frame["model"] == LENGTH].groupby(["source", "target"])["cka"].mean()
    assert means.to_dict() == pytest.approx(
        {("en", t): linear_cka(feature[0], length_feature(pooled.lengths[t])) for t in ("fr", "zh")}
    )


# ----------------------------------------------------------------------------- released code
def test_rbf_windows_is_the_windowed_rbf_cka_of_the_same_states():
    rng = np.random.default_rng(34)
    pooled = _pooled(rng)
    settings = SimilaritySettings(measure="rbf_windows", windows=2)
    measure = functools.partial(windowed_cka, windows=2, measure=rbf_cka)
    rows = run_similarity_rows(pooled, ["en"], True, settings, control=True)
    lengths = pooled.lengths
    for row in rows:
        if row.get("model") == LENGTH:
            x, y = length_feature(lengths["en"]), length_feature(lengths[row["target"]])
        else:
            x, y = pooled.states["en"][row["layer"]], pooled.states[row["target"]][row["layer"]]
            controlled = length_controlled_cka(
                x, y, lengths["en"], lengths[row["target"]], measure=measure
            )
            assert row["cka_length_controlled"] == controlled
        assert row["cka"] == windowed_cka(x, y, 2, rbf_cka)
        assert row["cka"] != pytest.approx(linear_cka(x, y), abs=1e-3)
        assert row["cka_debiased"] is None  # linear CKA's estimator: not this measure's
    resampled = similarity_resample_rows(pooled, ["en"], 3, seed=4, settings=settings)
    drawn = parallel_draws(4, "muller", 3, 40)[1]
    row = next(r for r in resampled if (r["replicate"], r["target"], r["layer"]) == (1, "fr", 2))
    x, y = pooled.states["en"][2][drawn], pooled.states["fr"][2][drawn]
    assert row["cka"] == windowed_cka(x, y, 2, rbf_cka)


class _Tokenizer(SimpleNamespace):
    pass


def _released_mean(model, sentence, lang, framing):
    """What the released code pools: the states of the framed text, mean over positions 1:-1."""
    ids = torch.tensor([[*framing[0], *sentence, *framing[1]]])
    with torch.no_grad():
        hidden = model(ids, lang, output_hidden_states=True).hidden_states
    return [h[0, 1:-1].double().mean(0).numpy() for h in hidden]


@pytest.mark.parametrize(
    ("pooling", "framing", "extra"),
    [
        ("subwords", ([3], [1]), 0),  # [CLS] ids [SEP]: the subwords alone
        ("framed_twice", ([3, 3], [1, 1]), 2),  # [CLS] [CLS] ids [SEP] [SEP]: the inner pair too
    ],
)
def test_pooling_takes_the_mean_the_paper_or_the_released_code_takes(pooling, framing, extra):
    torch.manual_seed(0)
    config = EncoderConfig(vocab_size=40, languages=["en", "fr"], dim=8, layers=1, heads=1,
                           ffn_dim=8)  # fmt: skip
    model = MLMEncoder(config).eval()
    tokenizer = _Tokenizer(eos_id=1, pad_id=2, start_id=3)
    ids = {
        "en": [[5, 6, 7], [8, 9], [10, 11, 12, 13], [14, 15]],
        "fr": [[16, 17], [18, 19, 20], [21], [22, 23, 24, 25, 26]],
    }
    pooled = pooled_parallel(model, tokenizer, ids, pooling)
    for lang, sentences in ids.items():
        assert list(pooled.lengths[lang]) == [len(s) + extra for s in sentences]
        for index, sentence in enumerate(sentences):
            expected = _released_mean(model, sentence, lang, framing)
            got = [layer[index] for layer in pooled.states[lang]]
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_the_fingerprint_keeps_the_paper_reading_as_it_was():
    run = {"group": "ref", "seed": 1, "hp": {"lr": 1.0}, "similarity": True}
    before = run_fingerprint(run, "pos", {}, __file__, debiased=True)
    paper = {"measure": "linear", "windows": 4, "pooling": "subwords"}
    assert run_fingerprint(run, "pos", {}, __file__, debiased=True, measure=paper) == before
    assert "measure" not in before["similarity"]
    unused = {**paper, "windows": 8}  # windows count with rbf_windows alone
    assert run_fingerprint(run, "pos", {}, __file__, debiased=True, measure=unused) == before
    released = {"measure": "rbf_windows", "windows": 4, "pooling": "framed_twice"}
    changed = run_fingerprint(run, "pos", {}, __file__, debiased=True, measure=released)
    assert changed["similarity"]["measure"] == released
    init = {**run, "group": "1-2"}
    plain = run_fingerprint(init, "pos", {}, __file__)
    assert "random_init_scheme" not in plain
    drawn = run_fingerprint(init, "pos", {}, __file__, random_init_scheme="pytorch_default")
    assert drawn == {**plain, "random_init_scheme": "pytorch_default"}
    assert run_fingerprint(run, "pos", {}, __file__, random_init_scheme="pytorch_default") == (
        run_fingerprint(run, "pos", {}, __file__)
    )  # the reference model draws nothing


def test_bad_similarity_settings_are_named():
    with pytest.raises(ValueError, match="measure 'cosine'"):
        SimilaritySettings(measure="cosine")
    with pytest.raises(ValueError, match="pooling 'strip'"):
        SimilaritySettings.from_config({"pooling": "strip"})
    with pytest.raises(ValueError, match="windows 0"):
        SimilaritySettings(windows=0)
