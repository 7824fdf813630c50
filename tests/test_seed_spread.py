"""Table 1's rows against the spread of several runs: counts, the rule, bad input."""

import math

import pandas as pd
import pytest

from xling.report.seed_spread import main, read_table1, spreads


def _table(path, scores: dict[str, tuple[float, float]]) -> str:
    """A Table 1 csv as xling.report.table1 writes it: variant, then each score column with its
    paper and diff columns; ``scores`` maps a variant to (XNLI fr, XNLI Δ)."""
    rows = [
        {"group": "", "row": v, "variant": v, "XNLI fr": fr, "XNLI fr paper": 70.0,
         "XNLI fr diff": fr - 70.0, "XNLI Δ": delta, "XNLI Δ paper": 70.0}
        for v, (fr, delta) in scores.items()
    ]  # fmt: skip
    pd.DataFrame(rows).to_csv(path, index=False)
    return str(path)


def test_rows_count_as_apart_only_beyond_their_combined_spread(tmp_path):
    # default and sep_emb: means 40 and 34, spreads 1/sqrt(2) each -> apart;
    # default and no_anchors: means 40 and 39, spreads 1/sqrt(2) and 3/sqrt(2) -> not apart.
    a = _table(
        tmp_path / "a.csv", {"default": (40.5, 1), "no_anchors": (40.5, 1), "sep_emb": (34.5, 1)}
    )
    b = _table(
        tmp_path / "b.csv", {"default": (39.5, 1), "no_anchors": (37.5, 1), "sep_emb": (33.5, 1)}
    )
    result = {item.column: item for item in spreads([read_table1(a), read_table1(b)])}
    assert list(result) == ["XNLI fr", "XNLI Δ"]  # the paper's and diff columns are no scores
    fr = result["XNLI fr"]
    assert (fr.apart, fr.pairs) == (2, 3)  # default-sep_emb and no_anchors-sep_emb (39 vs 34)
    assert fr.spread_low == pytest.approx(1 / math.sqrt(2))
    assert fr.spread_high == pytest.approx(3 / math.sqrt(2))
    assert (result["XNLI Δ"].apart, result["XNLI Δ"].pairs) == (0, 3)  # equal rows: never apart


def test_a_difference_exactly_at_the_spread_does_not_count(tmp_path):
    # means 40 and 39; spreads sqrt(0.5) each, combined exactly 1.0
    a = _table(tmp_path / "a.csv", {"default": (40.5, 1), "sep_emb": (39.5, 1)})
    b = _table(tmp_path / "b.csv", {"default": (39.5, 1), "sep_emb": (38.5, 1)})
    (fr, _) = spreads([read_table1(a), read_table1(b)])
    assert fr.apart == 0


def test_cli_prints_every_score_column(tmp_path, capsys):
    a = _table(tmp_path / "a.csv", {"default": (40.5, 1), "sep_emb": (34.5, 1)})
    b = _table(tmp_path / "b.csv", {"default": (39.5, 1), "sep_emb": (33.5, 1)})
    assert main([a, b]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("XNLI fr: 1 of 1 pairs of rows apart")
    assert lines[1].startswith("XNLI Δ: 0 of 1 pairs")


def test_bad_input_names_the_file_and_the_fix(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"missing\.csv.*table1"):
        read_table1(tmp_path / "missing.csv")
    other = tmp_path / "other.csv"
    other.write_text("variant,score\ndefault,1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"other\.csv: not a Table 1 csv"):
        read_table1(other)
    a = _table(tmp_path / "a.csv", {"default": (40, 1), "sep_emb": (34, 1)})
    b = _table(tmp_path / "b.csv", {"default": (40, 1), "no_anchors": (34, 1)})
    with pytest.raises(ValueError, match=r"b\.csv: its rows .* one config"):
        main([a, b])
    with pytest.raises(ValueError, match="two runs"):
        spreads([read_table1(a)])


def test_a_multi_seed_tables_std_columns_are_no_scores(tmp_path):
    # a study with several seeds writes '<col> std' beside each column (xling.report.compare)
    paths = []
    for name, fr in (("a", 40.0), ("b", 41.0)):
        path = _table(tmp_path / f"{name}.csv", {"default": (fr, 1), "sep_emb": (30, 1)})
        frame = pd.read_csv(path)
        frame["XNLI fr std"] = 0.5
        frame.to_csv(path, index=False)
        paths.append(path)
    columns = [item.column for item in spreads([read_table1(p) for p in paths])]
    assert columns == ["XNLI fr", "XNLI Δ"]
