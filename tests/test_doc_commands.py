"""Every command of README.md and docs/ works as written (issue #60: the docs cannot drift again).

The ```bash blocks of README.md and of every page of docs/ (not docs/notebook/, the lab notebook)
are read from the pages themselves, so a block added later is picked up; two sets run elsewhere
(README's "Running parts of it": tests/test_readme.py; docs/howto.md: tests/test_howto.py). Each
command line is matched against HANDLERS, a table of patterns, and run by its handler in a scratch
copy of the repository (tests/docblocks.py: links, with slurm/, README.md and docs/ copied, since
commands edit or rewrite them), the cheapest faithful way:

* ``make TARGET VAR=...``: ``make -n`` (and ``make -n -W pyproject.toml``, which shows the venv's
  set-up, TORCH_INDEX's pip line included); what it prints must be what plain ``make -n TARGET``
  prints, changed as MAKE_VARIABLES says, and the Snakemake run of that is planned (a dry run);
* ``snakemake ...`` (``.venv/bin/`` or not; ``--profile slurm`` or a copied profile): a dry run
  (``--dry-run`` appended unless there), which must plan what PLANS says where it says anything;
* ``snakemake ... --forcerun X``, ``--rerun-triggers ...``, ``--list-changes ...``: in a scratch
  copy without results the first two plan every job, as the documented dry run of the same
  command without them does, which this file runs already, and the third builds that plan to list
  nothing: Snakemake's own parser (with the profile) must find the two commands equal but for
  those options, and each ``--forcerun`` word a rule or a file some rule writes (``$(ls ...)``
  expanded where stand-ins of the models it lists lie). Without such a dry run, or with
  XLING_DOC_COMMANDS_FULL=1, the line runs itself (as a dry run; ``--list-changes`` as written);
* ``snakemake --report HTML --configfile C``: for real, on empty stand-ins of every output of C's
  plan (as tests/test_report_html.py builds them). The paper study's plan of 5,000 jobs takes a
  minute to write and report, so its line must be the demo's with the paper's config and study
  (tests/test_report_html.py builds the paper study's report; XLING_DOC_COMMANDS_FULL=1 runs it);
* ``python -m xling.cluster.plan|preflight ...``: for real (both are dry runs), one process for
  all of them, which builds each plan once: the two commands on one plan read it together, as
  ``read_plan`` gives it. ``sinfo``, ``scontrol``, ``sacctmgr`` and ``squeue`` are fakes that
  answer with the site's outputs recorded for tests/test_cluster_preflight.py;
* ``bash slurm/downloads.sh``: with ``-n``, the script's own dry run; ``bash slurm/envs.sh``:
  run with a recorder as Snakemake, whose command line Snakemake's parser must accept;
* ``sbatch SCRIPT ...``: ``bash -n``, its ``#SBATCH`` lines read as sbatch reads them, then the
  script run outside SLURM with ``SNAKEMAKE`` a recorder, and the Snakemake command it would run
  parsed by Snakemake (tests/test_cluster_scripts.py submits the controller to a real SLURM
  cluster where the test suite can start one);
* ``python -m xling.report.*``: for real, on stand-ins of the runs they read (claims.json and
  claims.md written by xling.report.claims, table1.csv as tests/test_seed_spread.py writes it);
* ``cp``, ``sed``, ``ls``: as written (a ``sed -i`` must change its file).

The lines run two at a time (the machine has two cores); identical runs (the same command in the
same kind of scratch copy) run once.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import tests.test_howto as howto_test
import tests.test_readme as readme_test
from tests.docblocks import (
    DRY,
    LINKED,
    REPO,
    VENV,
    Block,
    bash_blocks,
    command_lines,
    scratch_repository,
)

README = REPO / "README.md"
DOCS = REPO / "docs"
NOTEBOOK = DOCS / "notebook"
PAGES = [README, *(p for p in sorted(DOCS.rglob("*.md")) if NOTEBOOK not in p.parents)]
# (page, section) -> the test that runs its blocks; section None: the whole page
ELSEWHERE = {
    ("README.md", "Running parts of it"): "tests/test_readme.py",
    ("docs/howto.md", None): "tests/test_howto.py",
}
FULL = os.environ.get("XLING_DOC_COMMANDS_FULL") == "1"
WORKERS = 2
SITE = REPO / "tests/cluster/slurm_outputs/site"
SITE_USER = "alice"  # the user the site's outputs were recorded for
# configs whose every output is written here as a stand-in for their report
REPORTED_HERE = {"config/demo.yaml"}
TIMEOUT = 600


# --------------------------------------------------------------------------- the commands
@dataclass(frozen=True)
class Line:
    block: Block
    number: int  # in its page
    text: str  # the command, its comment left out

    @property
    def page(self) -> str:
        return str(self.block.doc.relative_to(REPO))

    @property
    def id(self) -> str:
        return f"{self.page}:{self.number}"


def without_comment(text: str) -> str:
    """The command without a trailing ``# comment`` (a ``#`` inside quotes or a word stays)."""
    quote = None
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or text[i - 1].isspace()):
            return text[:i].rstrip()
    return text.rstrip()


def run_elsewhere(block: Block) -> str | None:
    page = str(block.doc.relative_to(REPO))
    section = block.heading.split(" / ")[0]
    return ELSEWHERE.get((page, section)) or ELSEWHERE.get((page, None))


def documented_lines() -> list[Line]:
    lines = []
    for page in PAGES:
        for block in bash_blocks(page):
            if run_elsewhere(block) is None:
                lines += [Line(block, n, without_comment(text)) for n, text in command_lines(block)]
    return [line for line in lines if line.text]


LINES = documented_lines()


# --------------------------------------------------------------------------- running things
@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str = ""

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def tail(self, n: int = 4000) -> str:
        return self.output[-n:]


def environment(first: tuple[Path, ...] = (), **extra: str) -> dict[str, str]:
    """This environment, without what a SLURM job or the controller would have set (the commands
    run outside SLURM), the project's environment first on the PATH, as the docs assume."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SLURM_", "XLING_CONTROLLER", "SNAKEMAKE"))
    }
    env["PATH"] = os.pathsep.join([*map(str, first), str(VENV / "bin"), os.environ["PATH"]])
    return {**env, **extra}


def run(argv: list[str], cwd: Path, env: dict[str, str] | None = None, timeout=TIMEOUT) -> Ran:
    done = subprocess.run(
        argv, cwd=cwd, env=env or environment(), capture_output=True, text=True, timeout=timeout
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def bash(command: str, cwd: Path, env: dict[str, str] | None = None, timeout=TIMEOUT) -> Ran:
    return run(["bash", "-e", "-o", "pipefail", "-c", command], cwd, env, timeout)


def program(words: list[str]) -> str:
    return Path(words[0]).name


def snakemake_key(words: list[str]) -> tuple[str, ...]:
    """What makes two Snakemake commands the same run: the program found either way, the dry-run
    flag wherever it stands."""
    return ("snakemake", *(word for word in words[1:] if word not in DRY))


class Session:
    """The scratch copies, what to run in them (each distinct run once) and its outcomes."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.work: dict[tuple, Callable[[], Ran]] = {}
        self.results: dict[tuple, object] = {}
        # signature -> [(line id, argv)] of the Snakemake dry runs registered
        self.dry_runs: dict[tuple, list[tuple[str, list[str]]]] = {}
        self.cluster_requests: dict[tuple, list[tuple[tuple, str, list[str]]]] = {}
        self.cluster_roots: dict[tuple, Path] = {}
        self.parse_requests: list[tuple[tuple, dict, tuple]] = []
        self.fakes = fake_cluster(tmp / "fake-slurm")
        self.recorder = recorder(tmp / "recorder")
        self._count = 0
        self._lock = threading.Lock()

    def directory(self, name: str) -> Path:
        with self._lock:
            self._count += 1
            return self.tmp / f"{self._count:02d}-{name}"

    def add(self, key: tuple, work: Callable[[], Ran]) -> tuple:
        self.work.setdefault(key, work)
        return key

    def result(self, key: tuple):
        outcome = self.results[key]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def run_all(self) -> None:
        batches = [self._cluster_batch(signature) for signature in self.cluster_requests]
        if self.parse_requests:
            batches.append(self._parse_batch())
        # the longest first: the plans of the paper study, then the Snakemake runs
        singles = sorted(self.work.items(), key=lambda item: item[0][0] != "snakemake")

        def one(item):
            key, work = item
            try:
                return {key: work()}
            except Exception as error:  # reported by the line's test
                return {key: error}

        with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
            futures = [pool.submit(batch) for batch in batches]
            futures += [pool.submit(one, item) for item in singles]
            for future in futures:
                self.results.update(future.result())

    # ------------------------------------------------------------------ batches
    def cluster_tool(self, scratch: Scratch, tool: str, words: list[str]) -> tuple:
        key = ("cluster", scratch.signature, tool, tuple(words))
        requests = self.cluster_requests.setdefault(scratch.signature, [])
        self.cluster_roots.setdefault(scratch.signature, scratch.root)
        if all(key != known for known, _, _ in requests):
            requests.append((key, tool, words))
        return key

    def _cluster_batch(self, signature: tuple) -> Callable[[], dict]:
        requests = self.cluster_requests[signature]
        root = self.cluster_roots[signature]

        def batch() -> dict:
            folder = self.directory("cluster-tools")
            folder.mkdir()
            (folder / "in.json").write_text(json.dumps([[t, w] for _, t, w in requests]))
            env = environment((self.fakes,), USER=SITE_USER, LOGNAME=SITE_USER)
            code = [sys.executable, "-c", CLUSTER_TOOLS, folder / "in.json", folder / "out.json"]
            ran = run(list(map(str, code)), root, env)
            if ran.returncode != 0:
                error = AssertionError(f"the cluster tools' runner failed:\n{ran.tail()}")
                return {key: error for key, _, _ in requests}
            outcomes = json.loads((folder / "out.json").read_text())
            return {
                key: Ran(outcome["returncode"], outcome["stdout"], ran.stderr)
                for (key, _, _), outcome in zip(requests, outcomes, strict=True)
            }

        return batch

    def parse(self, scratch: Scratch, argv: list[str], line: Line, own=frozenset()) -> tuple:
        """Snakemake's parser on ``argv``, and which documented dry runs of the same kind of
        scratch copy it equals but for the settings ``own`` (and the default target)."""
        key = ("parse", line.id)
        request = {"cwd": str(scratch.root), "argv": argv, "own": sorted(own)}
        self.parse_requests.append((key, request, scratch.signature))
        return key

    def _parse_batch(self) -> Callable[[], dict]:
        def batch() -> dict:
            folder = self.directory("parse")
            folder.mkdir()
            requests = []
            for _, request, signature in self.parse_requests:
                requests.append({**request, "candidates": self.dry_runs.get(signature, [])})
            (folder / "in.json").write_text(json.dumps(requests))
            code = [sys.executable, "-c", PARSE, folder / "in.json", folder / "out.json"]
            ran = run(list(map(str, code)), REPO)
            if ran.returncode != 0:
                error = AssertionError(f"Snakemake's parser could not be run:\n{ran.tail()}")
                return {key: error for key, _, _ in self.parse_requests}
            outcomes = json.loads((folder / "out.json").read_text())
            return {key: o for (key, _, _), o in zip(self.parse_requests, outcomes, strict=True)}

        return batch


@dataclass
class Scratch:
    """A block's scratch copy of the repository."""

    session: Session
    root: Path
    # what it holds besides the repository: stand-ins, and the block's shell lines run so far;
    # runs in copies of one signature are the same run
    signature: tuple = ()
    notes: dict = field(default_factory=dict)

    def bash(self, command: str, **env: str) -> Ran:
        return bash(command, self.root, environment(**env))

    def dry_run(self, command: str, line: Line) -> tuple:
        """A Snakemake line as a dry run (``--dry-run`` appended unless there), registered to run
        once per signature."""
        words = shlex.split(command)
        if not DRY & set(words):
            command = f"{command} --dry-run"
        key = ("snakemake", self.signature, snakemake_key(words))
        runs = self.session.dry_runs.setdefault(self.signature, [])
        if all(snakemake_key(words) != ("snakemake", *argv[:-1]) for _, argv in runs):
            runs.append((line.id, [*snakemake_key(words)[1:], "--dry-run"]))
        return self.session.add(key, lambda: self.bash(command))


# --------------------------------------------------------------------------- checks
Check = Callable[[], None]


def planned_jobs(output: str, rule: str) -> list[str]:
    """The text of each planned job of ``rule`` in a dry run's output."""
    return re.findall(rf"^(?:local)?rule {re.escape(rule)}:\n(.*?)(?=^\S|\Z)", output, re.M | re.S)


def job_counts(output: str) -> dict[str, int]:
    """A dry run's "Job stats" table: jobs per rule."""
    table = output.split("Job stats:", 1)[-1].split("\n\n", 1)[0]
    return {rule: int(n) for rule, n in re.findall(r"^(\w+)\s+(\d+)$", table, re.M)}


# (pattern of a documented Snakemake command, [(rule, text each of its planned jobs shows)])
PLANS: list[tuple[str, list[tuple[str, str]]]] = [
    (r"snakemake --profile slurm -n all", [("pretrain_model", "gpu=8"), ("table1", "")]),
    (r".*--profile slurm-demo .*", [("pretrain_model", "gpu=1")]),
    (r".* results/paper/tables/table1\.md.*", [("table1", "results/paper/tables/table1.md")]),
    (r".*study=demo_seed2024.*", [("pretrain_model", "results/demo_seed2024/"), ("claims", "")]),
    (
        r"\.venv/bin/snakemake all --cores \d+ --configfile config/demo\.yaml --scheduler greedy "
        r"--max-jobs-per-timespan 500/5s",
        [("claims", "results/demo/report/claims.md")],
    ),
]


def expect_plan(ran: Ran, command: str) -> None:
    """A dry run that worked: it says so, read the profile it names and planned jobs."""
    assert ran.returncode == 0, ran.tail()
    assert "This was a dry-run" in ran.output, ran.tail()
    words = shlex.split(command)
    if "--profile" in words:
        profile = words[words.index("--profile") + 1]
        assert f"Using profile {profile} " in ran.output, ran.tail()
    assert job_counts(ran.output).get("total", 0) > 0, ran.tail()
    for pattern, expected in PLANS:
        if re.fullmatch(pattern, command):
            for rule, text in expected:
                jobs = planned_jobs(ran.output, rule)
                assert jobs, f"no {rule} job planned:\n{ran.tail(3000)}"
                assert all(text in job for job in jobs), f"a {rule} job without {text!r}"


# --------------------------------------------------------------------------- handlers
def make_commands(output: str) -> list[str]:
    """The commands ``make -n`` prints, continuation lines joined; without the "Entering
    directory" lines a make run inside another (``make test`` runs the tests) prints."""
    lines = output.replace("\\\n", " ").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("make[")]


def makefile_default(name: str) -> str:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    match = re.search(rf"^{name} \?= *(\S*)$", text, re.M)
    assert match, f"the Makefile has no default for {name}"
    return match.group(1)


# What a make variable changes in what `make -n TARGET` prints (the venv's set-up aside, which
# `make -n -W pyproject.toml` prints): text, value -> text
MAKE_VARIABLES: dict[str, Callable[[str, str], str]] = {
    "CORES": lambda text, value: text.replace(
        f"--cores {makefile_default('CORES')} ", f"--cores {value} "
    ),
    "TORCH_INDEX": lambda text, value: text,  # the pip line of torch alone
}


def make_dry_run(scratch: Scratch, line: Line, match: re.Match) -> Check:
    """``make -n``, and ``make -n -W pyproject.toml`` (as if the venv were to be refreshed):
    what each would run. The Snakemake run that plain ``make -n TARGET`` prints is planned; with
    variables, what it prints must be that changed as MAKE_VARIABLES says."""
    words = shlex.split(line.text)
    target, settings = words[1], dict(word.split("=", 1) for word in words[2:])
    plain = scratch.bash(shlex.join(["make", "-n", target]))
    given = scratch.bash(shlex.join(["make", "-n", *words[1:]]))
    refresh = scratch.bash(shlex.join(["make", "-n", "-W", "pyproject.toml", *words[1:]]))
    printed = make_commands(given.stdout)
    runs = [c for c in make_commands(plain.stdout) if re.match(rf"{SNAKEMAKE} all ", c)]
    keys = [(run_, scratch.dry_run(run_, line)) for run_ in runs]

    def check() -> None:
        for ran in (plain, given, refresh):
            assert ran.returncode == 0, ran.tail()
        unknown = set(settings) - set(MAKE_VARIABLES)
        assert not unknown, f"what does {sorted(unknown)} change? (MAKE_VARIABLES)"
        expected = plain.stdout
        for name, value in settings.items():
            expected = MAKE_VARIABLES[name](expected, value)
        assert printed == make_commands(expected), printed
        if target == "demo":
            cores = settings.get("CORES", makefile_default("CORES"))
            assert len(runs) == 1, printed
            assert any(f"--cores {cores} " in command for command in printed), printed
            assert "--configfile config/demo.yaml" in runs[0], runs[0]
            report = "--report results/demo/report.html --configfile config/demo.yaml"
            assert any(report in command for command in printed), printed
        else:  # make test: lint, formatting, then the tests
            assert any("ruff check" in command for command in printed), printed
            assert printed[-1].endswith("pytest"), printed
        [torch] = [c for c in make_commands(refresh.stdout) if "pip install" in c and "torch" in c]
        index = settings.get("TORCH_INDEX")
        if index:
            assert f"--index-url {index} " in torch, torch
        else:
            assert "--index-url" not in torch, torch
        for command, key in keys:
            expect_plan(scratch.session.result(key), command)

    return check


def snakemake_dry_run(scratch: Scratch, line: Line, match: re.Match) -> Check:
    key = scratch.dry_run(line.text, line)
    return lambda: expect_plan(scratch.session.result(key), line.text)


def snakemake_as_written(scratch: Scratch, line: Line) -> Ran:
    ran = scratch.bash(line.text)
    assert ran.returncode == 0, ran.tail()
    words = shlex.split(line.text)
    if "--profile" in words:
        assert f"Using profile {words[words.index('--profile') + 1]} " in ran.output, ran.tail()
    return ran


def study_of(config: str) -> str:
    from xling.study import load

    return load(REPO / config)["study"]


def snakemake_report(scratch: Scratch, line: Line, match: re.Match) -> Check:
    """The report, built for real from stand-ins of every output (see stand_in_outputs)."""
    html, config = match.group("html"), match.group("config")
    if config not in REPORTED_HERE and not FULL:
        return report_like_the_demos(line, html, config)
    key = scratch.session.add(("report", line.id), lambda: scratch.bash(line.text))

    def check() -> None:
        from tests.test_report_html import check_report

        ran = scratch.session.result(key)
        assert ran.returncode == 0, ran.tail()
        assert html == f"results/{study_of(config)}/report.html", "not the study's own folder"
        check_report(scratch.root / html, scratch.notes["reported"][config])

    return check


def report_like_the_demos(line: Line, html: str, config: str) -> Check:
    def shape(text: str, config: str) -> list[str]:
        words = shlex.split(text)
        words = [program(words), *words[1:]]
        study = f"results/{study_of(config)}/"
        return [w.replace(config, "{config}").replace(study, "results/{study}/") for w in words]

    def check() -> None:
        reported = {}  # a report line run here -> its config
        for other in LINES:
            found = handler_of(other)
            if found and found[0] is snakemake_report and found[1]["config"] in REPORTED_HERE:
                reported[other.text] = found[1]["config"]
        assert reported, f"no documented report of {sorted(REPORTED_HERE)} that this one is like"
        assert html == f"results/{study_of(config)}/report.html", "not the study's own folder"
        shapes = [shape(text, other) for text, other in reported.items()]
        assert shape(line.text, config) in shapes, (
            f"{line.text!r} is not {next(iter(reported))!r} with {config} and its study"
        )

    return check


def argv_of(command: str, cwd: Path) -> list[str]:
    """The words of a command after its program, as the shell expands them in ``cwd``."""
    words = command.split(None, 1)
    rest = words[1] if len(words) > 1 else ""
    ran = bash(f"__argv() {{ printf '%s\\0' \"$@\"; }}; __argv {rest}", cwd)
    assert ran.returncode == 0, ran.tail()
    return ran.stdout.split("\0")[:-1]


def snakemake_same_plan(scratch: Scratch, line: Line, match: re.Match) -> Check:
    """``--forcerun``, ``--rerun-triggers``, ``--list-changes``: on a scratch copy without
    results, the plan of a documented dry run (see the module's docstring); without one, or with
    XLING_DOC_COMMANDS_FULL=1, a dry run itself (``--list-changes``: as written, it only reads)."""
    listing = "--list-changes" in line.text.split()
    if FULL and listing:
        key = ("as written", line.id)
        scratch.session.add(key, lambda: snakemake_as_written(scratch, line))
        return lambda: scratch.session.result(key) and None
    if FULL:
        return snakemake_dry_run(scratch, line, match)
    cwd = scratch.root
    if "$(" in line.text:  # a listing of the study's results: where stand-ins of its models lie
        cwd = stand_in_models(scratch.session.directory("models"), line.text)
    argv = argv_of(line.text, cwd)
    own = {"list_changes"} if listing else {"forcerun", "rerun_triggers"}
    key = scratch.session.parse(scratch, [*argv, "--dry-run"], line, own)

    def check() -> None:
        parsed = scratch.session.result(key)
        assert parsed["error"] is None, parsed["error"]
        if "$(" in line.text:
            assert parsed["forcerun"], "the listing names none of the files the study writes"
        for word, rules in parsed["forcerun"].items():
            assert rules, f"--forcerun {word}: neither a rule nor a file a rule writes"
        if parsed["matches"]:
            return
        # no documented dry run plans the same: run this one
        if listing:
            snakemake_as_written(scratch, line)
        else:
            command = shlex.join(["snakemake", *argv])
            expect_plan(scratch.bash(f"{command} --dry-run"), line.text)

    return check


def cluster_tool(scratch: Scratch, line: Line, match: re.Match) -> Check:
    tool = match.group("tool")
    words = shlex.split(line.text)[3:]
    key = scratch.session.cluster_tool(scratch, tool, words)
    configs = words[words.index("--configfile") + 1 :] if "--configfile" in words else []
    config = configs[0] if configs else "config/config.yaml"
    profile = words[words.index("--profile") + 1] if "--profile" in words else "slurm"

    def check() -> None:
        ran = scratch.session.result(key)
        if words and not words[0].startswith("-"):  # a target: its jobs alone
            # a file's rule (table1.md: table1), or a target rule's (pilot: pilot_report)
            stem = re.escape(Path(words[0]).stem)
            suffix = "" if "/" in words[0] else r"(?:_\w+)?"
            assert re.search(rf"^\w+ +{stem}{suffix} ", ran.stdout, re.M), ran.tail()
        if tool == "plan":
            assert ran.returncode == 0, ran.tail()
            assert "GPU-hours asked for at the first attempt" in ran.stdout, ran.tail()
            assert re.search(r"^total +[\d,]+ ", ran.stdout, re.M), ran.tail()
            return
        # exit 1 where a check failed, each failure naming the setting to change
        assert ran.returncode in (0, 1), ran.tail()
        header = re.search(
            r"^Preflight of study '(\S+)' with (\S+): [\d,]+ jobs to run, [\d,]+ of them on the "
            rf"cluster .* checked against the cluster of {SITE_USER}\.$",
            ran.stdout,
            re.M,
        )
        assert header, ran.tail()
        assert header.group(1) == study_of(config), header.group()
        assert header.group(2) == f"{profile}/config.yaml", header.group()
        assert "\nDisk under " in ran.stdout and "\nGPU-hours asked: " in ran.stdout
        errors = ran.stdout.split("\nERRORS (", 1)[-1].split("\n\n", 1)[0]
        assert ("\nERRORS (" in ran.stdout) == (ran.returncode == 1), ran.tail()
        numbered = re.findall(r"^  \d+\. ", errors, re.M)
        assert len(numbered) == errors.count("\n     Change: "), errors

    return check


def downloads(scratch: Scratch, line: Line, match: re.Match) -> Check:
    """The script's own dry run (``-n``, which it passes to Snakemake)."""
    key = scratch.session.add(
        ("downloads", scratch.signature, line.text), lambda: scratch.bash(f"{line.text} -n")
    )
    script = (REPO / "slurm/downloads.sh").read_text(encoding="utf-8")
    listed = re.search(r"RULES=\(([^)]*)\)", script)
    assert listed, "slurm/downloads.sh has no RULES=(...)"

    def check() -> None:
        ran = scratch.session.result(key)
        expect_plan(ran, line.text)
        counts = job_counts(ran.output)
        counts.pop("total")
        assert set(counts) <= set(listed.group(1).split()), counts

    return check


# An #SBATCH line's option -> how sbatch reads its value
SBATCH_VALUES: dict[str, Callable[[str], bool]] = {
    "job-name": lambda v: re.fullmatch(r"[\w.-]+", v) is not None,
    "cpus-per-task": lambda v: re.fullmatch(r"[1-9]\d*", v) is not None,
    "mem": lambda v: re.fullmatch(r"[1-9]\d*[KMGT]?", v) is not None,
    "time": lambda v: _slurm_minutes(v) is not None,
    "signal": lambda v: re.fullmatch(r"(?:[BR]:)?(?:SIG)?[A-Z0-9]+(?:@\d+)?", v) is not None,
    "output": lambda v: re.fullmatch(r"[\w./%-]+", v) is not None,
    "partition": lambda v: re.fullmatch(r"[\w.,-]+", v) is not None,
    "account": lambda v: re.fullmatch(r"[\w.-]+", v) is not None,
    "qos": lambda v: re.fullmatch(r"[\w.-]+", v) is not None,
}


def _slurm_minutes(text: str) -> float | None:
    from xling.cluster.slurminfo import minutes_of

    return minutes_of(text)


def sbatch_lines(script: Path) -> list[str]:
    """The script's #SBATCH lines; sbatch reads them up to the first command."""
    lines = script.read_text(encoding="utf-8").splitlines()
    first = next(
        (i for i, text in enumerate(lines) if text.strip() and not text.startswith("#")),
        len(lines),
    )
    assert not [t for t in lines[first:] if t.startswith("#SBATCH")], "#SBATCH after a command"
    return [text for text in lines[:first] if text.startswith("#SBATCH")]


def sbatch(scratch: Scratch, line: Line, match: re.Match) -> Check:
    """The script checked by bash and read as sbatch reads it, then run outside SLURM with a
    recorder as Snakemake, whose command line Snakemake's parser must accept. A real submission:
    tests/test_cluster_scripts.py, on the test suite's own SLURM cluster."""
    words = shlex.split(line.text)
    at = next(i for i, word in enumerate(words) if word.endswith(".sbatch"))
    script, arguments = words[at], words[at + 1 :]
    syntax = scratch.bash(shlex.join(["bash", "-n", script]))
    argv_file = scratch.session.directory("argv")
    env = {"SNAKEMAKE": str(scratch.session.recorder), "RECORDED_ARGV": str(argv_file)}
    ran = bash(shlex.join(["bash", script, *arguments]), scratch.root, environment(**env), 60)
    argv = argv_file.read_text().split("\0")[:-1] if argv_file.exists() else []
    key = scratch.session.parse(scratch, [*argv, "--dry-run"], line) if argv else None

    def check() -> None:
        assert syntax.returncode == 0, syntax.tail()
        options = sbatch_lines(scratch.root / script)
        assert options, f"{script} has no #SBATCH lines"
        for option in options:
            found = re.fullmatch(r"#SBATCH --([a-z-]+)=(\S+)", option)
            assert found, f"{option!r}: not --option=value"
            name, value = found.groups()
            assert name in SBATCH_VALUES, f"{option!r}: an option this test does not know"
            assert SBATCH_VALUES[name](value), f"{option!r}: sbatch would refuse the value"
        assert ran.returncode == 0, ran.tail()
        assert argv, f"{script} did not run Snakemake"
        parsed = scratch.session.result(key)
        assert parsed["error"] is None, parsed["error"]
        assert parsed["profile"] in ("slurm", ["slurm"]), parsed

    return check


def envs_script(scratch: Scratch, line: Line, match: re.Match) -> Check:
    """slurm/envs.sh run with a recorder as Snakemake, whose command line Snakemake's parser must
    accept: the profile's, building the envs only."""
    argv_file = scratch.session.directory("argv-envs")
    env = {"SNAKEMAKE": str(scratch.session.recorder), "RECORDED_ARGV": str(argv_file)}
    ran = bash(line.text, scratch.root, environment(**env), 60)
    argv = argv_file.read_text().split("\0")[:-1] if argv_file.exists() else []
    key = scratch.session.parse(scratch, [*argv, "--dry-run"], line) if argv else None

    def check() -> None:
        assert ran.returncode == 0, ran.tail()
        assert "--conda-create-envs-only" in argv, argv
        parsed = scratch.session.result(key)
        assert parsed["error"] is None, parsed["error"]
        assert parsed["profile"] in ("slurm", ["slurm"]), parsed

    return check


def report_tool(scratch: Scratch, line: Line, match: re.Match) -> Check:
    """A comparison or rewrite of the runs' results, for real, on their stand-ins."""
    tool = match.group("tool")
    key = scratch.session.add(("report-tool", line.id), lambda: scratch.bash(line.text))
    words = shlex.split(line.text)[3:]
    runs = scratch.notes.get("runs", [])

    def check() -> None:
        ran = scratch.session.result(key)
        assert ran.returncode == 0, ran.tail()
        out = ran.stdout
        claim, total = scratch.notes.get("changed claim"), scratch.notes.get("claims")
        if tool == "agreement":
            verdicts = " / ".join(["not computed"] + ["supported"] * (len(runs) - 1))
            assert f"{claim}: {verdicts}\n" in out, out
            if "--numbers" in words:
                margins = " / ".join(["-0.5"] + ["2.5"] * (len(runs) - 1))
                assert f"  margin: {margins}\n" in out, out
            assert f"same verdict in every run: {total - 1} of {total}" in out, out
        elif tool == "run_summary":
            folders = [w for w in words if not w.startswith("-")]
            assert out.startswith("| | " + " | ".join(folders) + " |\n"), out
            supported = ["0"] + ["1"] * (len(folders) - 1)
            row = " | ".join(f"{n} of {total}" for n in supported)
            assert f"| claims supported | {row} |" in out, out
        elif tool == "seed_spread":
            assert re.search(r"^XNLI fr: \d+ of \d+ pairs of rows apart", out, re.M), out
        elif tool == "readme_results":
            from xling.report import readme_results

            source, page = words
            assert out.strip() == f"{page}: updated", out
            expected = readme_results.update(
                (REPO / page).read_text(encoding="utf-8"),
                (scratch.root / source).read_text(encoding="utf-8"),
                source,
            )
            assert (scratch.root / page).read_text(encoding="utf-8") == expected

    return check


def as_written(scratch: Scratch, line: Line, match: re.Match) -> Check:
    """Plain shell commands, run now, in order (later lines of the block read what they
    write); each ``sed -i`` must change its file."""
    outcomes = []
    for part in line.text.split(" && "):
        words = shlex.split(part)
        edited = scratch.root / words[-1] if words[:2] == ["sed", "-i"] else None
        before = edited.read_bytes() if edited and edited.exists() else None
        ran = scratch.bash(part)
        outcomes.append((part, ran, edited, before))
        if ran.returncode != 0:
            break
    scratch.signature = (*scratch.signature, line.text)

    def check() -> None:
        for part, ran, edited, before in outcomes:
            assert ran.returncode == 0, f"{part}:\n{ran.tail()}"
            if edited is not None:
                assert before is not None and edited.read_bytes() != before, f"{part}: no change"

    return check


# The handlers, by the pattern a documented command matches in full; the first that matches runs
# it. A command no pattern matches fails test_every_command_has_a_handler.
PYTHON = r"(?:\.venv/bin/)?python3?"
SNAKEMAKE = r"(?:\.venv/bin/)?snakemake"
SHELL = r"(?:cp|sed|ls|mkdir|cat) [^;|&<>]*"
HANDLERS: list[tuple[re.Pattern, Callable[[Scratch, Line, re.Match], Check]]] = [
    (re.compile(r"make (?:demo|test)(?: [A-Z_]+=\S+)*"), make_dry_run),
    (re.compile(rf"{SNAKEMAKE} .* --list-changes .*"), snakemake_same_plan),
    (
        re.compile(rf"{SNAKEMAKE} --report (?P<html>\S+\.html) --configfile (?P<config>\S+)"),
        snakemake_report,
    ),
    (re.compile(rf"{SNAKEMAKE} .* --(?:forcerun|rerun-triggers)(?: .*)?"), snakemake_same_plan),
    (re.compile(rf"{SNAKEMAKE}(?: [^;|&<>$`]*)?"), snakemake_dry_run),
    (re.compile(rf"{PYTHON} -m xling\.cluster\.(?P<tool>plan|preflight)(?: .*)?"), cluster_tool),
    (re.compile(r"bash slurm/downloads\.sh(?: .*)?"), downloads),
    (re.compile(r"bash slurm/envs\.sh(?: .*)?"), envs_script),
    (re.compile(r"sbatch (?:--\S+ )*slurm/\w+\.sbatch(?: .*)?"), sbatch),
    (
        re.compile(
            rf"{PYTHON} -m xling\.report\.(?P<tool>agreement|run_summary|seed_spread"
            r"|readme_results) .*"
        ),
        report_tool,
    ),
    (re.compile(rf"{SHELL}(?: && {SHELL})*"), as_written),
]


def handler_of(line: Line):
    for pattern, handler in HANDLERS:
        match = pattern.fullmatch(line.text)
        if match:
            return handler, match
    return None


HANDLED = [line for line in LINES if handler_of(line) is not None]


# --------------------------------------------------------------------------- stand-ins
def stand_in_runs(root: Path, folders: list[str]) -> dict:
    """Each results folder the comparisons read, as a finished run: its claims.json and claims.md
    (xling.report.claims on a run with nothing computed) and its Table 1 csv. The first claim's
    verdict and number differ between the first run and the others."""
    from tests.test_seed_spread import _table
    from xling.report import claims

    verdicts = claims.evaluate(claims.Run({}))
    notes = {"runs": folders, "claims": len(verdicts)}
    for i, folder in enumerate(folders):
        path = root / folder
        (path / "report").mkdir(parents=True, exist_ok=True)
        (path / "tables").mkdir(parents=True, exist_ok=True)
        (path / "report/claims.md").write_text(claims.to_markdown(verdicts, path.name))
        document = json.loads(claims.to_json(verdicts, path.name))
        changed = document["claims"][0]
        changed["numbers"] = {"margin": -0.5 if i == 0 else 2.5}
        if i:
            changed["verdict"] = "supported"
            document["counts"]["supported"] += 1
            document["counts"]["not computed"] -= 1
        notes["changed claim"] = changed["id"]
        (path / "report/claims.json").write_text(json.dumps(document, indent=2))
        scores = {"default": (40.5, 1), "no_anchors": (40.5, 1), "sep_emb": (34.5, 1)}
        if i:
            scores = {"default": (39.5, 1), "no_anchors": (37.5, 1), "sep_emb": (33.5, 1)}
        _table(path / "tables/table1.csv", scores)
    return notes


def stand_in_outputs(root: Path, config: str) -> list[str]:
    """Every output of the config's plan as an empty file (or folder), as a finished study leaves
    them; returns the outputs marked for the report."""
    from tests.dag import outputs

    planned = outputs([root / config], root)
    for output in planned:
        path = root / output.path
        if output.directory:
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
    return sorted({output.path for output in planned if output.report})


def stand_in_models(folder: Path, command: str) -> Path:
    """A folder holding ``results/<study>/pretrain/<pair>/<variant>/summary.json`` for every
    model of the command's study (config/config.yaml unless it names another)."""
    from xling.study import load

    words = command.split()
    config = words[words.index("--configfile") + 1] if "--configfile" in words else None
    settings = load(REPO / (config or "config/config.yaml"))
    for pair in settings["pairs"]:
        for variant in settings["variants"]:
            path = folder / f"results/{settings['study']}/pretrain/{pair}/{variant}/summary.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("{}\n")
    return folder


def scratch_for(session: Session, block: Block, lines: list[Line]) -> Scratch:
    """The block's own scratch copy, with the stand-ins its commands read."""
    name = re.sub(r"\W+", "-", f"{block.doc.stem}-{block.line}")
    root = scratch_repository(
        session.directory(name),
        linked=(*LINKED, "Makefile"),
        copied=("slurm", "README.md", *(str(p.relative_to(REPO)) for p in PAGES[1:])),
    )
    scratch = Scratch(session, root)
    read = [line for line in lines if re.search(r"-m xling\.report\.", line.text)]
    folders = list(
        dict.fromkeys(f for ln in read for f in re.findall(r"\bresults/[\w-]+", ln.text))
    )
    if folders:
        scratch.notes.update(stand_in_runs(root, folders))
        scratch.signature += (f"runs {' '.join(folders)}",)
    scratch.notes["reported"] = {}
    for line in lines:
        found = handler_of(line)
        if found and found[0] is snakemake_report:
            config = found[1].group("config")
            if config in REPORTED_HERE or FULL:
                scratch.notes["reported"][config] = stand_in_outputs(root, config)
                scratch.signature += (f"outputs {config}",)
    return scratch


# --------------------------------------------------------------------------- helper programs
def fake_cluster(folder: Path) -> Path:
    """``sinfo``, ``scontrol``, ``sacctmgr`` and ``squeue`` answering as the site recorded in
    tests/cluster/slurm_outputs/site (the commands xling.cluster.slurminfo and plan run)."""
    folder.mkdir(parents=True)
    text = f"""#!/usr/bin/env bash
site={shlex.quote(str(SITE))}
case "$(basename "$0") $*" in
    "scontrol show partition"*) cat "$site/scontrol_show_partition.txt" ;;
    "scontrol show config"*) cat "$site/scontrol_show_config.txt" ;;
    "sinfo --Node"*) cat "$site/sinfo_nodes.txt" ;;
    "sinfo -h -o %R") sed -n 's/^PartitionName=\\([^ ]*\\).*/\\1/p' \\
        "$site/scontrol_show_partition.txt" ;;
    "sacctmgr "*" associations "*) cat "$site/sacctmgr_associations.txt" ;;
    "sacctmgr "*" qos "*) cat "$site/sacctmgr_qos.txt" ;;
    "sacctmgr "*" user "*) cat "$site/sacctmgr_user.txt" ;;
    "squeue "*"--user"*) cat "$site/squeue.txt" ;;
    *) echo "$(basename "$0"): no recorded answer to: $*" >&2; exit 1 ;;
esac
"""
    for name in ("sinfo", "scontrol", "sacctmgr", "squeue"):
        (folder / name).write_text(text)
        (folder / name).chmod(0o755)
    return folder


def recorder(path: Path) -> Path:
    """Stands in for Snakemake: writes its arguments, NUL-separated, to $RECORDED_ARGV."""
    path.write_text('#!/usr/bin/env bash\nprintf \'%s\\0\' "$@" > "$RECORDED_ARGV"\n')
    path.chmod(0o755)
    return path


# Runs ``python -m xling.cluster.plan|preflight ARGS`` for each request (argv[1]: JSON of
# [tool, args]) in one process, each plan built once (``read_plan`` shared by both tools);
# writes [{returncode, stdout}] to argv[2].
CLUSTER_TOOLS = """
import contextlib, io, json, sys, traceback
from pathlib import Path
from xling.cluster import plan, preflight

read_plan, plans = plan.read_plan, {}

def shared(profile, configfiles, targets, workdir=None):
    where = str(Path(workdir or Path.cwd()).resolve())
    key = json.dumps([profile, list(configfiles), list(targets), where])
    if key not in plans:
        plans[key] = read_plan(profile, configfiles, targets, workdir)
    return plans[key]

plan.read_plan = preflight.read_plan = shared
outcomes = []
for tool, args in json.load(open(sys.argv[1])):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            if tool == "plan":
                plan.main(args)
                code = 0
            else:
                code = preflight.main(args)
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else 1
    except Exception:
        code = 1
        out.write(traceback.format_exc())
    outcomes.append({"returncode": code, "stdout": out.getvalue()})
json.dump(outcomes, open(sys.argv[2], "w"))
"""

# Parses each request's Snakemake command line (argv[1]: JSON of {cwd, argv, own, candidates}) as
# Snakemake does, profile applied, and compares it with each candidate command (line id, argv):
# writes [{error, profile, matches (the candidates equal but for the settings `own` and the target
# where one names the default, `all`), forcerun ({word: ["rule"] or the rules that write the
# file})}] to argv[2].
PARSE = """
import contextlib, enum, io, json, os, sys, traceback
from pathlib import Path
from snakemake import cli

def plain(value):
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, (set, frozenset)):
        return sorted((plain(v) for v in value), key=str)
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    return plain(vars(value)) if hasattr(value, "__dict__") else str(value)

def settings(argv):
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return cli.parse_args(argv)[1], None
    except (SystemExit, Exception) as error:
        return None, err.getvalue()[-3000:] or f"Snakemake's parser refused it: {error!r}"

workflows = {}

def workflow(configfiles):
    from snakemake.api import SnakemakeApi
    from snakemake.settings.enums import Quietness
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    key = (os.getcwd(), tuple(map(str, configfiles or ())))
    if key not in workflows:
        api = SnakemakeApi(OutputSettings(quiet={Quietness.ALL}))
        with api:
            workflows[key] = api.workflow(
                resource_settings=ResourceSettings(cores=1),
                config_settings=ConfigSettings(
                    configfiles=[Path(f).resolve() for f in configfiles or ()]
                ),
                snakefile=Path("Snakefile").resolve(),
                workdir=Path.cwd(),
            )._workflow
    return workflows[key]

def check(request):
    os.chdir(request["cwd"])
    args, error = settings(request["argv"])
    if error:
        return {"error": error}
    flow = workflow(args.configfile)
    rules = {rule.name: rule for rule in flow.rules}
    mine = plain(vars(args))
    targets = lambda s: s["targets"] or [flow.default_target]
    matches = []
    for line, argv in request["candidates"]:
        other, failed = settings(argv)
        if failed:
            continue
        theirs = plain(vars(other))
        own = {"targets", *request["own"]}
        differ = {k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k)} - own
        if not differ and targets(mine) == targets(theirs):
            matches.append(line)
    forcerun = {
        word: ["rule"] if word in rules else [r.name for r in flow.rules if r.is_producer(word)]
        for word in sorted(args.forcerun or ())
    }
    return {"error": None, "profile": args.profile, "matches": matches, "forcerun": forcerun}

outcomes = []
for request in json.load(open(sys.argv[1])):
    try:
        outcomes.append(check(request))
    except Exception:
        outcomes.append({"error": traceback.format_exc()[-3000:]})
json.dump(outcomes, open(sys.argv[2], "w"))
"""


# --------------------------------------------------------------------------- the tests
def test_every_command_has_a_handler():
    missing = [f"no handler for {line.id}: {line.text}" for line in LINES if not handler_of(line)]
    assert not missing, "\n".join(missing)


def test_the_pages_have_commands_and_the_blocks_run_elsewhere_are_run_there():
    assert {line.page for line in LINES} >= {"README.md", "docs/cluster.md", "docs/demo.md"}
    readme = [
        line
        for block in bash_blocks(README)
        if run_elsewhere(block) == "tests/test_readme.py"
        for line in block.text.splitlines()
        if line.strip()
    ]
    assert readme and readme == readme_test.COMMANDS
    howto = [block.text for block in bash_blocks(REPO / "docs/howto.md")]
    assert howto and howto == [b.text for b in howto_test.BLOCKS if b.doc.name == "howto.md"]


def test_no_commands_hide_in_other_shell_fences():
    """A ```sh or ```console block would be read by no test: commands go in ```bash blocks."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        fences = re.findall(r"^\s*```(sh|shell|console|zsh|terminal)\s*$", text, re.M)
        assert not fences, f"{page.relative_to(REPO)}: ```{fences[0]} (use ```bash)"


@pytest.fixture(scope="module")
def checks(tmp_path_factory) -> dict[str, Check | BaseException]:
    """Every handled line prepared in doc order, block by block, each block in its own scratch
    copy; then everything registered run, two at a time."""
    session = Session(tmp_path_factory.mktemp("doc-commands"))
    prepared: dict[str, Check | BaseException] = {}
    blocks: dict[Block, list[Line]] = {}
    for line in HANDLED:
        blocks.setdefault(line.block, []).append(line)
    for block, lines in blocks.items():
        scratch = scratch_for(session, block, lines)
        for line in lines:
            handler, match = handler_of(line)
            try:
                prepared[line.id] = handler(scratch, line, match)
            except Exception as error:  # reported by the line's test
                prepared[line.id] = error
    session.run_all()
    return prepared


@pytest.mark.parametrize("line", HANDLED, ids=lambda line: line.id)
def test_documented_command_works_as_written(line, checks):
    check = checks[line.id]
    if isinstance(check, BaseException):
        raise check
    check()
