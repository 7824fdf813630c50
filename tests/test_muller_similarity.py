"""Muller et al.'s similarity on bootstrap resamples of the parallel sentences: one draw for every
language, model and layer, gathered beside similarity.csv, and the claims over the CKA curves
facing them as the test-score claims face their test sets'."""

import numpy as np
import pandas as pd
import pytest

from tests.test_claims import muller_similarity
from xling.analysis.cka import linear_cka, parallel_draws
from xling.muller.collect import (
    RESAMPLE_COLUMNS,
    similarity_resamples,
    similarity_rows,
    stale_similarity,
)
from xling.muller.similarity import RESAMPLE_COLUMNS as RUN_RESAMPLE_COLUMNS
from xling.muller.similarity import similarity_resample_rows, write_similarity
from xling.report import claims
from xling.report.claims import NOT_SUPPORTED, SUPPORTED, Run


def _pooled(rng, n=40, layers=3):
    english = [rng.normal(size=(n, 4)) for _ in range(layers)]
    return {
        "en": english,
        "fr": [e + rng.normal(size=e.shape) for e in english],
        "zh": [rng.normal(size=(n, 4)) for _ in range(layers)],
    }


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
            linear_cka(pooled["en"][2][drawn], pooled[target][2][drawn]), rel=1e-10
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
