"""The README's "Results of the demo" block is generated from claims.md, idempotently, and nothing
outside its markers changes."""

from pathlib import Path

import pytest

from xling.report import claims, readme_results
from xling.report.readme_results import BEGIN, END, MarkerError

REPO = Path(__file__).resolve().parents[1]

README = f"""# A project

Some text that must stay as it is.

## Results of the demo

{BEGIN}
typed by hand, to be replaced
{END}

## After

More text | with a table | and {{braces}}.
"""


def claims_md() -> str:
    results = claims.evaluate(claims.Run({}))  # nothing computed: every claim "not computed"
    return claims.to_markdown(results, "demo")


def updated_readme(source: Path, readme: Path) -> None:
    """Write a claims.md at `source` and the sample README at `readme`, then update it."""
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(claims_md())
    readme.write_text(README)
    assert readme_results.main([str(source), str(readme)]) == 0


def test_only_the_marked_block_changes_and_a_second_run_changes_nothing(tmp_path):
    source, readme = tmp_path / "claims.md", tmp_path / "README.md"
    updated_readme(source, readme)
    once = readme.read_text()
    before, _, rest = once.partition(BEGIN)
    block, _, after = rest.partition(END)
    assert before == README.partition(BEGIN)[0]
    assert after == README.partition(END)[2]
    assert "typed by hand" not in block
    assert f"{len(claims.CLAIMS)} claims: 0 supported, 0 not supported" in block
    assert "| `wu-4.1-domain` Domain mismatch costs little |" in block
    assert f"Generated from `{source}`" in block  # not under a results/ folder: as given
    mtime = readme.stat().st_mtime_ns
    assert readme_results.main([str(source), str(readme)]) == 0
    assert readme.read_text() == once
    assert readme.stat().st_mtime_ns == mtime  # not even rewritten


def test_markers_missing_twice_or_reversed_are_errors():
    md = claims_md()
    with pytest.raises(MarkerError):
        readme_results.update("no markers here", md, "claims.md")
    with pytest.raises(MarkerError):
        readme_results.update(f"{BEGIN}\n{END}\n{BEGIN}\n{END}\n", md, "claims.md")
    with pytest.raises(MarkerError):
        readme_results.update(f"{END}\n{BEGIN}\n", md, "claims.md")
    with pytest.raises(MarkerError):
        readme_results.update(f"{BEGIN}\n{END}\n", "a claims.md without its summary", "claims.md")


def test_the_readme_has_the_block():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    assert text.index("## Results of the demo") < text.index(BEGIN) < text.index(END)


def test_the_source_is_shown_from_its_results_folder_not_as_the_machines_path(tmp_path):
    readme = tmp_path / "README.md"
    updated_readme(tmp_path / "clone" / "results" / "demo" / "report" / "claims.md", readme)
    text = readme.read_text()
    assert "Generated from `results/demo/report/claims.md`" in text
    assert str(tmp_path) not in text
