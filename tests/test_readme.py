"""The README's "Running parts of it" commands work as written (each run as a dry run)."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")


def documented_commands(section: str) -> list[str]:
    """The command lines of the ```bash blocks of one README section."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## )", text, re.S | re.M)
    assert match, f"README has no section {section!r}"
    blocks = re.findall(r"```bash\n(.*?)```", match.group(1), re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


COMMANDS = documented_commands("Running parts of it")


def test_the_section_documents_a_stage_a_file_and_the_paper_plan():
    words = [shlex.split(line, comments=True) for line in COMMANDS]
    assert all(argv[0] == ".venv/bin/snakemake" for argv in words)
    targets = {argv[1] for argv in words}
    assert {"data", "all", "results/demo/tables/table1.md"} <= targets
    assert any("config/config.yaml" in argv for argv in words)


@pytest.mark.parametrize("line", COMMANDS)
def test_documented_command_plans(line, tmp_path):
    argv = shlex.split(line, comments=True)
    command = [str(SNAKEMAKE), *argv[1:], "--dry-run", "--directory", str(tmp_path)]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert "This was a dry-run" in output, output[-3000:]
    # the named target is planned (a stage rule, or the rule that writes the named file)
    target = argv[1]
    expected = "table1" if target.endswith("table1.md") else target
    assert re.search(rf"^rule {re.escape(expected)}:", output, re.M), output[-3000:]
