"""UD datasets of config data.ud: a generated UD v2.4-like release (the real folder and file names,
generated sentences) imported as the rule does, and once through Snakemake from a local server."""

import copy
import functools
import io
import os
import random
import socketserver
import subprocess
import sys
import tarfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from xling import study
from xling.acquire.archive import safe_extract
from xling.acquire.ud import import_ud
from xling.contracts.conllu import read_conllu
from xling.study import keys

REPO = Path(__file__).resolve().parents[1]
RELEASE = "ud-treebanks-v2.4"
# treebank folder -> (file prefix, splits), as UD v2.4 names them
TREEBANKS = {
    "UD_English-PUD": ("en_pud", ("test",)),
    "UD_Arabic-PUD": ("ar_pud", ("test",)),
    "UD_English-EWT": ("en_ewt", ("train", "dev", "test")),
    "UD_Russian-GSD": ("ru_gsd", ("train", "dev", "test")),
}
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]


def sentence(rng, sent_id):
    """One CoNLL-U sentence of generated words: a chain, the first word the root."""
    words = rng.sample(WORDS, rng.randint(2, 6))
    lines = [f"# sent_id = {sent_id}", f"# text = {' '.join(words)}"]
    for index, word in enumerate(words, start=1):
        head, relation = (0, "root") if index == 1 else (index - 1, "dep")
        lines.append(f"{index}\t{word}\t{word}\tNOUN\t_\t_\t{head}\t{relation}\t_\t_")
    return "\n".join(lines) + "\n\n"


def treebank_text(prefix, split, n=3):
    rng = random.Random(f"{prefix}-{split}")
    return "".join(sentence(rng, f"{prefix}-{split}-{i}") for i in range(1, n + 1))


def write_release(path):
    """A .tgz laid out as the UD release: ud-treebanks-v2.4/UD_X-Y/x_y-ud-split.conllu."""
    with tarfile.open(path, "w:gz") as archive:
        for folder, (prefix, splits) in TREEBANKS.items():
            for split in splits:
                data = treebank_text(prefix, split).encode("utf-8")
                info = tarfile.TarInfo(f"{RELEASE}/{folder}/{prefix}-ud-{split}.conllu")
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
            readme = b"# Summary\n\nGenerated for the tests.\n"
            info = tarfile.TarInfo(f"{RELEASE}/{folder}/README.md")
            info.size = len(readme)
            archive.addfile(info, io.BytesIO(readme))
    return path


@pytest.fixture(scope="module")
def paper_config():
    return study.load(REPO / "config/config.yaml", REPO / "config/schema.yaml")


@pytest.fixture
def release(tmp_path):
    """The generated release, unpacked as the unpack rule does."""
    archive = write_release(tmp_path / "ud24")
    return safe_extract(archive, tmp_path / "unpacked" / "ud24")


def outputs_of(source, folder):
    return {split: folder / f"{split}.conllu" for split in source["splits"]}


def test_a_test_only_dataset_imports_its_test_split(paper_config, release, tmp_path):
    source = keys.ud_source(paper_config, "pud", "ar")
    assert source["download"] == "ud24" and source["treebank"] == "UD_Arabic-PUD"
    assert source["splits"] == ["test"]
    outputs = outputs_of(source, tmp_path / "out")
    assert import_ud(source, outputs, release) == {"test": 3}
    assert outputs["test"].read_text() == treebank_text("ar_pud", "test")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["test.conllu"]


def test_a_train_dev_test_dataset_imports_every_split(paper_config, release, tmp_path):
    source = keys.ud_source(paper_config, "ewt", "en")
    assert source["splits"] == ["train", "dev", "test"]
    outputs = outputs_of(source, tmp_path / "out")
    assert import_ud(source, outputs, release) == {"train": 3, "dev": 3, "test": 3}
    for split, path in outputs.items():
        assert path.read_text() == treebank_text("en_ewt", split)
        assert len(read_conllu(path)) == 3


def test_the_dataset_picks_the_treebank_of_the_language(paper_config, release, tmp_path):
    # gsd: Russian-GSD for ru (a source), French-GSD for fr; the generated release has only ru
    source = keys.ud_source(paper_config, "gsd", "ru")
    outputs = outputs_of(source, tmp_path / "ru")
    import_ud(source, outputs, release)
    assert outputs["train"].read_text() == treebank_text("ru_gsd", "train")
    source = keys.ud_source(paper_config, "gsd", "fr")
    with pytest.raises(FileNotFoundError, match=r"'UD_French-GSD'.*data\.ud\.gsd\.treebanks"):
        import_ud(source, outputs_of(source, tmp_path / "fr"), release)


def test_a_split_the_treebank_lacks_names_the_splits_key(paper_config, release, tmp_path):
    config = copy.deepcopy(paper_config)
    config["data"]["ud"]["pud"]["splits"] = ["dev", "test"]
    source = keys.ud_source(config, "pud", "en")
    with pytest.raises(FileNotFoundError, match=r"no dev split.*data\.ud\.pud\.splits"):
        import_ud(source, outputs_of(source, tmp_path / "out"), release)


def test_unconfigured_dataset_or_language_names_the_key(paper_config):
    with pytest.raises(ValueError, match=r"no UD dataset 'tweebank' in config key 'data\.ud'"):
        keys.ud_source(paper_config, "tweebank", "en")
    with pytest.raises(ValueError, match=r"'data\.ud\.pud\.treebanks' has no 'sl'"):
        keys.ud_source(paper_config, "pud", "sl")


def test_a_manual_dataset_comes_from_the_manual_folder(paper_config, tmp_path):
    config = copy.deepcopy(paper_config)
    config["data"]["manual_dir"] = str(tmp_path / "m")
    source = keys.ud_source(config, "lexnorm", "en")
    assert source == {
        "dataset": "lexnorm",
        "lang": "en",
        "splits": ["test"],
        "manual_dir": str(tmp_path / "m"),
    }
    outputs = outputs_of(source, tmp_path / "out")
    expected = tmp_path / "m" / "lexnorm" / "en" / "test.conllu"
    with pytest.raises(FileNotFoundError) as error:
        import_ud(source, outputs, release_dir=None)
    assert str(expected) in str(error.value) and "by hand" in str(error.value)
    expected.parent.mkdir(parents=True)
    expected.write_text(treebank_text("en_lexnorm", "test"))
    assert import_ud(source, outputs) == {"test": 3}
    assert outputs["test"].read_text() == expected.read_text()


def test_a_malformed_manual_file_stops_with_its_line(paper_config, tmp_path):
    config = copy.deepcopy(paper_config)
    config["data"]["manual_dir"] = str(tmp_path)
    source = keys.ud_source(config, "lexnorm", "en")
    path = tmp_path / "lexnorm" / "en" / "test.conllu"
    path.parent.mkdir(parents=True)
    path.write_text("1\tnoisy\ttweet\n\n")  # three columns: not CoNLL-U
    outputs = outputs_of(source, tmp_path / "out")
    with pytest.raises(ValueError, match=r"test\.conllu:1: expected 10 tab-separated columns"):
        import_ud(source, outputs)
    assert not outputs["test"].exists()


class _QuietServer(ThreadingHTTPServer):
    def server_bind(self):
        # HTTPServer's own looks up the host's name (getfqdn): seconds without DNS.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def served(tmp_path):
    """A folder served over HTTP on 127.0.0.1: yields (folder, base URL)."""
    folder = tmp_path / "www"
    folder.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = _QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield folder, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_paper_workflow_downloads_and_imports_ud24_and_lexnorm(served, tmp_path):
    folder, base = served
    write_release(folder / "ud-treebanks-v2.4.tgz")
    manual = tmp_path / "manual"
    (manual / "lexnorm" / "en").mkdir(parents=True)
    (manual / "lexnorm" / "en" / "test.conllu").write_text(treebank_text("en_lexnorm", "test"))
    override = tmp_path / "override.yaml"
    override.write_text(
        yaml.safe_dump(
            {
                "data": {
                    "downloads": {"ud24": {"url": f"{base}/ud-treebanks-v2.4.tgz"}},
                    "manual_dir": str(manual),
                }
            }
        )
    )
    workdir = tmp_path / "run"
    data = workdir / "results" / "paper" / "data" / "ud"
    targets = ["pud/ar/test.conllu", "ewt/en/train.conllu", "lexnorm/en/test.conllu"]
    command = [
        str(Path(sys.executable).with_name("snakemake")), "--cores", "1",
        "--directory", str(workdir), "--snakefile", str(REPO / "Snakefile"),
        "--configfile", str(REPO / "config/config.yaml"), str(override),
        "--", *(f"results/paper/data/ud/{target}" for target in targets),
    ]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (data / "pud/ar/test.conllu").read_text() == treebank_text("ar_pud", "test")
    assert sorted(p.name for p in (data / "pud/ar").iterdir()) == ["test.conllu"]
    for split in ("train", "dev", "test"):
        assert (data / f"ewt/en/{split}.conllu").read_text() == treebank_text("en_ewt", split)
    assert (data / "lexnorm/en/test.conllu").read_text() == treebank_text("en_lexnorm", "test")
