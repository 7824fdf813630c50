"""bench/ holds the benchmarks `make bench` runs; the measurements docs cite, bench/measurements/.

Reads file names and text only: no benchmark or measurement runs here.
"""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
MEASUREMENTS = BENCH / "measurements"
# Not a benchmark, kept in bench/: prints a demo run's times and budget figure (README.md, docs/).
TOOLS = {"demo_timing"}
# Where a path under bench/ is cited: the docs, the configs, code comments and docstrings.
CITING = ["README.md", "Makefile", "docs/**/*.md", "config/*.yaml", "slurm/*.yaml", "src/**/*.py"]
CITED_PATH = re.compile(r"bench/[\w/]+\.(?:py|yaml)")


def benches() -> list[str]:
    """The Makefile's BENCHES list."""
    text = (REPO / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
    match = re.search(r"^BENCHES\s*:?=(.*)$", text, re.M)
    assert match, "the Makefile has no BENCHES list"
    return match.group(1).split()


def doc_text() -> str:
    """README.md and docs/ (its notebook too), where a measurement has to be cited to stay."""
    paths = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    return "\n".join(path.read_text(encoding="utf-8") for path in paths)


def measurement_files() -> list[Path]:
    return sorted(p for p in MEASUREMENTS.iterdir() if p.suffix in {".py", ".yaml"})


def test_every_bench_script_is_a_benchmark_make_bench_runs():
    scripts = {path.stem for path in BENCH.glob("*.py")}
    listed = set(benches())
    unlisted, missing = sorted(scripts - TOOLS - listed), sorted(listed - scripts)
    assert not unlisted, f"not in BENCHES (a measurement goes to bench/measurements/): {unlisted}"
    assert not missing, f"in BENCHES without a bench/NAME.py: {missing}"
    assert not TOOLS & listed


def test_bench_holds_no_other_files():
    """A data file of bench/ belongs to a measurement, and goes beside it."""
    files = {path.name for path in BENCH.iterdir() if path.is_file()}
    folders = {path.name for path in BENCH.iterdir() if path.is_dir()}
    assert {name for name in files if not name.endswith(".py")} == set()
    assert folders - {"__pycache__"} == {"measurements"}


def test_every_measurement_is_listed_in_its_readme_and_cited_by_a_doc():
    readme = (MEASUREMENTS / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^- `([\w.]+)`:", readme, re.M))
    files = {path.name for path in measurement_files()}
    assert files, "bench/measurements/ holds no measurement"
    assert files == listed, (
        f"not in bench/measurements/README.md: {sorted(files - listed)}; "
        f"listed there without a file: {sorted(listed - files)}"
    )
    docs = doc_text()
    uncited = sorted(name for name in files if f"bench/measurements/{name}" not in docs)
    assert not uncited, f"no doc cites these (delete them, or cite them): {uncited}"


def test_every_cited_bench_path_exists():
    cited: dict[str, set[str]] = {}
    paths = [path for pattern in CITING for path in sorted(REPO.glob(pattern))]
    paths += sorted(BENCH.rglob("*.py")) + sorted(BENCH.rglob("*.yaml"))
    for path in paths:
        for name in CITED_PATH.findall(path.read_text(encoding="utf-8")):
            cited.setdefault(name, set()).add(str(path.relative_to(REPO)))
    assert cited
    missing = {name: sorted(where) for name, where in cited.items() if not (REPO / name).is_file()}
    assert not missing, f"cited, but no such file: {missing}"
