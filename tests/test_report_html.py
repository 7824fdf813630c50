"""Snakemake's HTML report of a study: every table and figure in it, each with its caption.

A run of the reduced demo takes minutes (tests/test_e2e.py builds the report from its real run);
here every output of the plan is written as an empty stand-in, `snakemake --touch` marks them
complete, and the report is built from those, for the demo and for the paper study. What is tested
is the report's wiring (which files, which captions, which categories), not the numbers.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.dag import outputs

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")

# what each captioned artefact's caption must name: (file name pattern, phrase)
CAPTIONS = [
    (r"^results/[^/]+/tables/table1\.(csv|md|tex)$", "Table 1 of Wu, Conneau et al. (2020)"),
    (r"muller/tables/table\d\.(csv|md|tex)$", "Muller et al. (2021) Table"),
    (r"muller/figures/figure\d\.(png|pdf)$", "Muller et al. (2021) Figure"),
    (r"figures/wu_figure3\.(png|pdf|csv)$", "Figure 3 of Wu, Conneau et al. (2020)"),
    (r"figures/cka_layers\.png$", "Linear CKA per layer"),
    (r"tables/anchors\.(csv|md|tex)$", "Anchor points"),
    (r"figures/wu_figure4\.(png|pdf|csv)$", "Figure 4 of Wu, Conneau et al. (2020)"),
    (r"figures/wu_figure5\.(png|pdf|csv)$", "Figure 5 of Wu, Conneau et al. (2020)"),
    (r"figures/wu_figure6\.(png|pdf|csv)$", "Figure 6 of Wu, Conneau et al. (2020)"),
    (r"figures/wu_figure7\.(png|pdf|csv)$", "Figure 7 of Wu, Conneau et al. (2020)"),
    (r"figures/wu_figure8\.(png|pdf|csv)$", "Figure 8 of Wu, Conneau et al. (2020)"),
    (r"tables/wu_cka_retrieval_pearson\.(csv|md|tex)$", "CKA against sentence retrieval"),
    (r"report/claims\.(md|json)$", "claims, checked against this run"),
    (r"figures/pretrain/[^/]+\.png$", "Pretraining curve"),
]


def snakemake(workdir, configfiles, *args):
    command = [
        str(SNAKEMAKE), *args, "--directory", str(workdir), "--snakefile", str(REPO / "Snakefile"),
        "--configfile", *map(str, configfiles),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    return result.stdout + result.stderr


def report_results(html: Path) -> dict:
    """The report's results (path -> name, caption, ...), as the report embeds them."""
    text = html.read_text(encoding="utf-8")
    match = re.search(r"var results = (\{.*?\});\s*</script>", text, re.S)
    assert match, "no results in the report"
    return json.loads(match.group(1))


def categories(html: Path) -> str:
    text = html.read_text(encoding="utf-8")
    match = re.search(r"var categories = (.*?);\s*</script>", text, re.S)
    assert match, "no categories in the report"
    return match.group(1)


def check_report(html: Path, marked: list[str]) -> None:
    results = report_results(html)
    assert set(results) == set(marked)
    for path, entry in results.items():
        phrases = [phrase for pattern, phrase in CAPTIONS if re.search(pattern, path)]
        assert phrases, f"{path} is in the report, but this test does not know its caption"
        assert phrases[0] in entry["caption"], (path, entry["caption"][:300])


def fake_finished_run(workdir: Path, configfiles, touch: bool = True) -> list[str]:
    """Every output of the plan as an empty file (or folder), then (``touch``) marked complete;
    returns the outputs marked for the report."""
    planned = outputs(configfiles, workdir)
    for output in planned:
        path = workdir / output.path
        if output.directory:
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
    if touch:
        snakemake(workdir, configfiles, "--touch", "--cores", "1", "all")
        assert "Nothing to be done" in snakemake(workdir, configfiles, "-n", "all")
    return sorted({o.path for o in planned if o.report})


@pytest.mark.parametrize(
    ("configfiles", "touch"),
    [
        ([REPO / "config/demo.yaml", REPO / "tests/config/e2e.yaml"], True),
        # the paper study plans thousands of jobs, and --touch spends 0.1 s on each: its stand-ins
        # are reported as they are (the report reads the files, not whether they are up to date)
        ([REPO / "config/config.yaml"], False),
    ],
    ids=["demo", "paper"],
)
def test_report_of_a_finished_study_captions_every_table_and_figure(tmp_path, configfiles, touch):
    marked = fake_finished_run(tmp_path, configfiles, touch)
    study = "demo" if "demo.yaml" in str(configfiles[0]) else "paper"
    must = [
        f"results/{study}/tables/{name}.{ext}"
        for name in ("table1", "anchors", "wu_cka_retrieval_pearson")
        for ext in ("csv", "md", "tex")
    ]
    must += [f"results/{study}/figures/wu_figure3.{ext}" for ext in ("png", "pdf", "csv")]
    must += [f"results/{study}/report/claims.{ext}" for ext in ("md", "json")]
    must += [
        f"results/{study}/figures/wu_figure{n}.{x}" for n in range(4, 9) for x in ("png", "pdf")
    ]
    must += [f"results/{study}/muller/tables/table{n}.md" for n in (1, 2, 4, 5, 6, 7, 8)]
    must += [f"results/{study}/muller/figures/figure{n}.pdf" for n in range(1, 9)]
    assert set(must) <= set(marked)
    html = tmp_path / f"results/{study}/report.html"
    snakemake(tmp_path, configfiles, "--report", str(html))
    check_report(html, marked)
    assert "Wu et al. 2020" in categories(html)
    assert "Muller et al. 2021" in categories(html)
    assert "Claims checked against this run" in categories(html)
