"""The paper facts the workflow relies on: Wu, Conneau et al. (2020), Table 1."""

import pytest

from xling.papers.wu2020 import (
    BUILD_KEYS,
    TABLE1_DESCRIPTORS,
    TABLE1_ROWS,
    TABLE1_SCORES,
    TABLE1_TARGETS,
    WU_TASKS,
)


def test_table1_has_the_papers_ten_rows():
    assert list(TABLE1_ROWS) == [
        "default",
        "wiki_cc",
        "default_anchors",
        "no_anchors",
        "extra_anchors",
        "sep_emb",
        "sep_emb_l1_3",
        "sep_emb_l1_6",
        "sep_l1_3",
        "sep_l1_6",
    ]
    assert all(name == row.name for name, row in TABLE1_ROWS.items())
    assert TABLE1_ROWS["wiki_cc"].domains == "wiki-cc"
    assert {r.domains for n, r in TABLE1_ROWS.items() if n != "wiki_cc"} == {"wiki-wiki"}
    assert TABLE1_ROWS["no_anchors"].vocab == "per_language_prefixed"
    assert TABLE1_ROWS["extra_anchors"].vocab == "codeswitch"
    layers = [TABLE1_ROWS[n].sep_layers for n in ("sep_emb_l1_6", "sep_l1_3", "default")]
    assert layers == [6, 3, 0]


def test_a_row_as_config_settings():
    assert TABLE1_ROWS["sep_emb_l1_3"].settings() == {
        "domains": "wiki-wiki",
        "vocab": "per_language",
        "sep_embeddings": True,
        "sep_layers": 3,
    }
    assert all(tuple(row.settings()) == BUILD_KEYS for row in TABLE1_ROWS.values())


def test_scores_and_descriptors_cover_exactly_the_rows():
    assert list(TABLE1_SCORES) == list(TABLE1_ROWS)
    assert list(TABLE1_DESCRIPTORS) == list(TABLE1_ROWS)
    assert {len(cells) for cells in TABLE1_DESCRIPTORS.values()} == {5}


@pytest.mark.parametrize("name", list(TABLE1_ROWS))
def test_each_average_is_the_mean_of_the_targets_as_printed(name):
    for task in WU_TASKS:
        *per_target, average = TABLE1_SCORES[name][task]
        assert len(per_target) == len(TABLE1_TARGETS)
        assert sum(per_target) / len(per_target) == pytest.approx(average, abs=0.05 + 1e-9)
