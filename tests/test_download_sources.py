"""Template downloads of the paper study: CC-100's and Wikipedia's own language names, and sha256
pins by file name for every template source (wikipedia, commoncrawl, muse, tatoeba, fasttext),
which the job reads from the config itself (a pin is not a param: pinning after the first download
reruns nothing)."""

from tests.dag import outputs, rule_settings
from xling.acquire.download import pinned_sha256

HEX = "ab" * 32


def test_cc100_chinese_is_zh_hans_and_a_pinned_checksum_reaches_the_job(repo, tmp_path):
    config = {"data": {"commoncrawl": {"sha256": {"zh-Hans.txt.xz": HEX}}}}
    jobs = rule_settings(
        [repo / "config/config.yaml"], tmp_path, "download_commoncrawl",
        targets=("results/paper/raw/commoncrawl/zh.txt.xz",
                 "results/paper/raw/commoncrawl/fr.txt.xz"),
        config=config,
    )  # fmt: skip
    sources = sorted((params["source"] for params, _ in jobs), key=lambda s: s["url"])
    assert sources == [
        {"url": "https://data.statmt.org/cc-100/fr.txt.xz", "pin": ["commoncrawl", "fr.txt.xz"]},
        {
            "url": "https://data.statmt.org/cc-100/zh-Hans.txt.xz",
            "pin": ["commoncrawl", "zh-Hans.txt.xz"],
        },
    ]
    data = config["data"]
    assert [pinned_sha256(data, *source["pin"]) for source in sources] == [None, HEX]


def test_muse_files_take_their_pins_by_file_name(repo, tmp_path):
    config = {"data": {"muse": {"sha256": {"en-fr.5000-6500.txt": HEX}}}}
    jobs = rule_settings(
        [repo / "config/config.yaml"], tmp_path, "download_muse",
        targets=("results/paper/data/muse/en-fr.test.txt",), config=config,
    )  # fmt: skip
    (params, _), *_ = jobs
    assert params["source"]["url"].endswith("/en-fr.5000-6500.txt")
    assert pinned_sha256(config["data"], *params["source"]["pin"]) == HEX


def test_a_download_pinned_after_it_ran_keeps_its_params(repo, tmp_path):
    def source(config):
        (params, _), *_ = rule_settings(
            [repo / "config/config.yaml"], tmp_path, "download",
            targets=("results/paper/raw/downloads/ud23",), config=config,
        )  # fmt: skip
        return params["source"]

    pinned = {"data": {"downloads": {"ud23": {"sha256": HEX}}}}
    assert source(pinned) == source({}) == {"url": source({})["url"], "pin": ["downloads", "ud23"]}
    assert pinned_sha256({"downloads": {"ud23": {"url": "u", "sha256": HEX}}}, "downloads", "ud23")


def test_a_transformers_model_file_is_fetched_from_its_revision_with_its_pin(repo, tmp_path):
    config = {"data": {"transformers": {"revision": "0123abc", "sha256": {"vocab.txt": HEX}}}}
    folder = "results/paper/raw/transformers/bert-base-multilingual-cased"
    jobs = rule_settings(
        [repo / "config/config.yaml"], tmp_path, "download_transformers_file",
        targets=(f"{folder}/vocab.txt",), config=config,
    )  # fmt: skip
    (params, retries), *others = jobs
    assert not others and retries == 2
    assert params["source"] == {
        "url": "https://huggingface.co/bert-base-multilingual-cased/resolve/0123abc/vocab.txt",
        "pin": ["transformers", "vocab.txt"],
    }
    assert pinned_sha256(config["data"], *params["source"]["pin"]) == HEX


def _wikipedia_download(repo, tmp_path, lang, config):
    """(output path, params) of the one download_wikipedia job that ``lang``'s text needs."""
    configfiles = [repo / "config/config.yaml"]
    target = f"results/paper/data/corpus/wiki/{lang}.txt"
    (params, _), *others = rule_settings(
        configfiles, tmp_path, "download_wikipedia", targets=(target,), config=config
    )
    paths = [o.path for o in outputs(configfiles, tmp_path, (target,), config)]
    assert not others
    return [path for path in paths if "/raw/wikipedia/" in path], params["source"]


def test_a_new_pair_takes_its_wikipedia_dump_from_the_url_template(repo, tmp_path):
    """The pair and its treebank are all a language of config `languages` needs: its dump is the
    template's, under Wikimedia's file name, pinned by that name."""
    dump = "eswiki-20261101-pages-articles.xml.bz2"
    config = {
        "pairs": ["en-fr", "en-ru", "en-zh", "en-es"],
        "data": {
            "ud": {"ud23": {"treebanks": {"es": "UD_Spanish-GSD"}}},
            "wikipedia": {"sha256": {dump: HEX}},
        },
    }
    paths, source = _wikipedia_download(repo, tmp_path, "es", config)
    assert paths == [f"results/paper/raw/wikipedia/es/{dump}"]
    assert source == {"url": f"https://dumps.wikimedia.org/eswiki/20261101/{dump}",
                      "pin": ["wikipedia", dump]}  # fmt: skip
    assert pinned_sha256(config["data"], *source["pin"]) == HEX


def test_wikipedias_own_name_of_a_language_goes_under_codes(repo, tmp_path):
    config = {"data": {"wikipedia": {"codes": {"en": "simple"}}}}
    paths, source = _wikipedia_download(repo, tmp_path, "en", config)
    dump = "simplewiki-20261101-pages-articles.xml.bz2"
    assert paths == [f"results/paper/raw/wikipedia/en/{dump}"]
    assert source["url"] == f"https://dumps.wikimedia.org/simplewiki/20261101/{dump}"
