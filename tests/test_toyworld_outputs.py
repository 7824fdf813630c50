"""Properties of the written toy world files (TINY_SPEC, generated once for the module)."""

import collections
import copy
import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

import conllu
import pytest

from xling.contracts.conllu import read_conllu
from xling.toyworld import DEMO_SPEC, TINY_SPEC, build, generate, output_paths, resolve_spec
from xling.toyworld.api import dictionary_languages

LANGS = TINY_SPEC["languages"]
OTHERS = [lang for lang in LANGS if lang != "en"]
WORD = re.compile(r"\w")  # a word type has a letter or digit (punctuation is not counted)
ANCHOR_TOLERANCE = 0.06  # absolute; the share is calibrated on 2000 sentences, measured on 300


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("toy")
    written = generate(TINY_SPEC, directory)
    assert written == [str(directory / p) for p in output_paths(TINY_SPEC)]
    return directory


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def _types(path: Path) -> set[str]:
    return {w.casefold() for line in _lines(path) for w in line.split(" ") if WORD.search(w)}


def test_writes_exactly_the_declared_files(out):
    on_disk = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert on_disk == sorted(output_paths(TINY_SPEC))  # no temporary files left behind
    for rel in on_disk:
        text = (out / rel).read_text(encoding="utf-8")
        assert text.endswith("\n") and "\r" not in text, rel


def test_corpora_are_one_raw_sentence_a_line(out):
    for domain, n in TINY_SPEC["sizes"]["corpus"].items():
        for lang in LANGS:
            lines = _lines(out / f"corpus/{domain}/{lang}.txt")
            assert len(lines) == n and all(lines), (domain, lang)
    en = _lines(out / "corpus/wiki/en.txt")
    # Punctuation is attached to the word before it, as in raw text.
    assert all(line.endswith((".", "!")) and not line.endswith((" .", " !")) for line in en)


def test_same_seed_same_bytes_in_another_process_with_another_hash_seed(out, tmp_path):
    code = (
        "import sys; from xling.toyworld import TINY_SPEC as S, generate; generate(S, sys.argv[1])"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, env=env)
    for rel in output_paths(TINY_SPEC):
        assert (tmp_path / rel).read_bytes() == (out / rel).read_bytes(), rel


def test_another_seed_gives_other_data(out, tmp_path):
    spec = copy.deepcopy(TINY_SPEC)
    spec["seed"] += 1
    spec["languages"] = ["en", "zh"]
    generate(spec, tmp_path)
    for rel in ("corpus/wiki/en.txt", "corpus/cc/zh.txt", "parallel/zh.txt", "xnli/xnli.dev.tsv"):
        assert (tmp_path / rel).read_bytes() != (out / rel).read_bytes(), rel


def test_measured_anchor_share_matches_the_profile(out):
    english = _types(out / "parallel/en.words.txt")
    assert len(english) > 150
    for lang in OTHERS:
        measured = len(english & _types(out / f"parallel/{lang}.words.txt")) / len(english)
        wanted = TINY_SPEC["profiles"][lang]["anchor_share"]
        assert abs(measured - wanted) <= ANCHOR_TOLERANCE, (lang, measured, wanted)


def test_english_prime_writes_words_the_english_text_has(out):
    """Wu et al.'s en' is read by a model trained on English text: its words must be English's.

    What en' may add are forms English rarely writes (passive participles); synonyms made as new
    forms, as the toy en' had until 2026-11-28, put a fifth of its word types here.
    """
    english = set().union(
        *(_types(out / rel) for rel in ("corpus/wiki/en.txt", "corpus/cc/en.txt",
                                        "parallel/en.words.txt"))
    )  # fmt: skip
    prime = _types(out / "parallel/enp.words.txt")
    assert len(prime - english) / len(prime) < 0.05, sorted(prime - english)


def test_zero_anchor_share_shares_no_word_type(tmp_path):
    spec = copy.deepcopy(TINY_SPEC)
    spec["languages"] = ["en", "fr", "ru"]
    for lang in ("fr", "ru"):
        spec["profiles"][lang]["anchor_share"] = 0.0
    generate(spec, tmp_path)
    english = _types(tmp_path / "parallel/en.words.txt") | _types(tmp_path / "corpus/wiki/en.txt")
    for lang in ("fr", "ru"):
        words = _types(tmp_path / f"parallel/{lang}.words.txt")
        words |= {
            w.casefold()
            for line in _lines(tmp_path / f"corpus/wiki/{lang}.txt")
            for w in re.findall(r"\w+", line)
        }
        assert len(words) > 100 and not english & words, sorted(english & words)[:10]


def test_chinese_has_no_spaces_and_recoverable_gold_words(out):
    for rel in (
        "corpus/wiki/zh.txt",
        "corpus/cc/zh.txt",
        "parallel/zh.txt",
        "tatoeba/en-zh.zh.txt",
    ):
        assert not any(" " in line for line in _lines(out / rel)), rel
    raw, words = _lines(out / "parallel/zh.txt"), _lines(out / "parallel/zh.words.txt")
    assert len(raw) == len(words) == TINY_SPEC["sizes"]["parallel"]
    assert all(w.replace(" ", "") == r and " " in w for r, w in zip(raw, words, strict=True))
    rows = [
        row.split("\t") for row in _lines(out / "xnli/xnli.test.tsv")[1:] if row.startswith("zh\t")
    ]
    assert rows and all(" " not in r[6] + r[7] and r[16].replace(" ", "") == r[6] for r in rows)
    with open(out / "ud/toy/zh/test.conllu", encoding="utf-8") as handle:
        for sentence in conllu.parse_incr(handle):
            assert sentence.metadata["text"] == "".join(t["form"] for t in sentence)


def test_segmenter_dictionary_lets_jieba_find_the_gold_chinese_words(out):
    from xling.preprocess import TextPipeline

    # Only the language written without spaces gets one.
    assert sorted(p.name for p in (out / "segmenter").iterdir()) == ["zh.dict.txt"]
    dictionary = out / "segmenter/zh.dict.txt"
    words = _lines(dictionary)
    gold = [line.split(" ") for line in _lines(out / "parallel/zh.words.txt")]
    assert {w for line in gold for w in line if WORD.search(w)} <= set(words)

    def agreement(pipeline):  # share of gold words the segmenter cuts exactly
        def spans(tokens):
            ends = itertools.accumulate(len(t) for t in tokens)
            return set(itertools.pairwise([0, *ends]))

        found = [(len(spans(pipeline.tokenize("".join(g))) & spans(g)), len(g)) for g in gold]
        return sum(f for f, _ in found) / sum(n for _, n in found)

    with_words = TextPipeline.from_dict(
        {"lang": "zh", "segmenter": "jieba", "user_dictionary": str(dictionary)}
    )
    # jieba alone cuts the many-character toy words into characters; with them it finds almost
    # every gold word (its HMM still joins a few single-character words).
    assert agreement(TextPipeline("zh", "jieba")) < 0.8
    assert agreement(with_words) > 0.95


def _check_tree(sentence, where):
    heads = [t["head"] for t in sentence]
    assert [t["id"] for t in sentence] == list(range(1, len(sentence) + 1)), where
    assert heads.count(0) == 1 and all(0 <= h <= len(sentence) for h in heads), where
    assert sentence[heads.index(0)]["deprel"] == "root", where
    for i in range(1, len(sentence) + 1):  # following heads from any word reaches the root
        seen, node = set(), i
        while node != 0:
            assert node not in seen, f"{where}: cycle through {node}"
            seen.add(node)
            node = heads[node - 1]
    text = "".join(
        t["form"] + ("" if (t["misc"] or {}).get("SpaceAfter") == "No" else " ") for t in sentence
    )
    assert text.rstrip(" ") == sentence.metadata["text"], where


UPOS = {
    "ADJ",
    "ADP",
    "ADV",
    "AUX",
    "CCONJ",
    "DET",
    "NOUN",
    "NUM",
    "PART",
    "PRON",
    "PROPN",
    "PUNCT",
    "SCONJ",
    "VERB",
}
DEPRELS = {
    "root",
    "nsubj",
    "obj",
    "obl",
    "nmod",
    "amod",
    "det",
    "nummod",
    "clf",
    "case",
    "mark",
    "cc",
    "conj",
    "advcl",
    "ccomp",
    "advmod",
    "aux",
    "cop",
    "flat",
    "punct",
}


# Every NER and UD dataset the toy world writes, and its splits: `toy` and one per domain.
DATASETS = {
    "toy": ("train", "dev", "test"),
    "toy_wiki": ("train", "dev", "test"),
    "toy_cc": ("dev", "test"),
}


def _task_splits(task):
    """(dataset, split, sentences) of every file of ``task`` (ner or ud)."""
    sizes = TINY_SPEC["sizes"][task]
    return [
        (dataset, split, sizes[split]) for dataset, splits in DATASETS.items() for split in splits
    ]


@pytest.mark.parametrize("lang", LANGS)
def test_treebanks_are_valid_conllu_trees(out, lang):
    for dataset, split, n in _task_splits("ud"):
        path = out / f"ud/{dataset}/{lang}/{split}.conllu"
        for line in _lines(path):
            assert line == "" or line.startswith("# ") or line.count("\t") == 9, line
        with open(path, encoding="utf-8") as handle:
            sentences = list(conllu.parse_incr(handle))
        assert len(sentences) == n
        assert len({s.metadata["sent_id"] for s in sentences}) == n
        assert sentences[0].metadata["sent_id"] == f"{dataset}-{lang}-{split}-00001"
        for s in sentences:
            _check_tree(s, f"{path.name} {s.metadata['sent_id']}")
            assert {t["upos"] for t in s} <= UPOS and {t["deprel"] for t in s} <= DEPRELS
        # The parser's and the POS tagger's own reader, with its tree and UPOS checks.
        assert len(read_conllu(path, require_upos=True)) == n


def _final_marks(path):
    """The sentence-final punctuation of each sentence of a UD or NER file."""
    text = path.read_text(encoding="utf-8")
    blocks = [block for block in text.split("\n\n") if block.strip()]
    return [
        block.split("\n")[-1].split("\t")[1 if path.suffix == ".conllu" else 0] for block in blocks
    ]


def test_domain_datasets_hold_their_domain_only(out):
    """Wikipedia sentences never end in "!" (exclamation_rate 0), Common Crawl ones often do."""
    for lang in ("en", "de"):
        for task, ext in (("ud", "conllu"), ("ner", "txt")):
            wiki = _final_marks(out / f"{task}/toy_wiki/{lang}/test.{ext}")
            cc = [
                mark
                for split in ("dev", "test")
                for mark in _final_marks(out / f"{task}/toy_cc/{lang}/{split}.{ext}")
            ]
            assert not any(mark.endswith("!") for mark in wiki), (task, lang)
            assert sum(mark.endswith("!") for mark in cc) >= 0.05 * len(cc), (task, lang)


def test_domain_datasets_leave_every_other_file_as_it_was(out, tmp_path, monkeypatch):
    """They draw from their own random streams: without them, the other files are the same bytes."""
    from xling.toyworld import api

    every_file = output_paths(TINY_SPEC)
    monkeypatch.setattr(api, "DOMAIN_DATASETS", {})
    written = generate(TINY_SPEC, tmp_path)
    assert len(written) == len(every_file) - 10 * len(LANGS)  # 5 files of each of NER and UD
    for path in written:
        rel = Path(path).relative_to(tmp_path)
        assert Path(path).read_bytes() == (out / rel).read_bytes(), rel


@pytest.mark.parametrize("lang", LANGS)
def test_ner_files_are_wikiann_with_valid_bio(out, lang):
    for dataset, split, n in _task_splits("ner"):
        blocks = (
            (out / f"ner/{dataset}/{lang}/{split}.txt").read_text(encoding="utf-8").split("\n\n")
        )
        assert blocks[-1] == "" and len(blocks) - 1 == n
        for block in blocks[:-1]:
            previous = "O"
            tags = []
            for line in block.split("\n"):
                word, tag = line.split("\t")
                assert word.startswith(f"{lang}:") and len(word) > len(lang) + 1, line
                assert re.fullmatch(r"O|[BI]-(PER|LOC|ORG)", tag), line
                if tag.startswith("I-"):
                    assert previous[2:] == tag[2:], block
                previous = tag
                tags.append(tag)
            assert any(t.startswith("B-") for t in tags), block  # WikiAnn sentences name entities


def test_xnli_files_have_the_real_layout_and_balanced_shared_pairs(out):
    header, *rows = [r.split("\t") for r in _lines(out / "xnli/xnli.dev.tsv")]
    assert header[:2] == ["language", "gold_label"] and len(header) == 19
    assert (
        header[6:10] == ["sentence1", "sentence2", "promptID", "pairID"] and header[-1] == "match"
    )
    assert all(len(r) == 19 for r in rows)
    per_lang = collections.defaultdict(list)
    for r in rows:
        per_lang[r[0]].append((r[8], r[9], r[1]))
    assert sorted(per_lang) == sorted(LANGS)
    assert all(v == per_lang["en"] for v in per_lang.values())  # same pair ids, same labels
    by_prompt = collections.defaultdict(list)
    for prompt, _, label in per_lang["en"]:
        by_prompt[prompt].append(label)
    assert all(sorted(v) == ["contradiction", "entailment", "neutral"] for v in by_prompt.values())
    train = [r.split("\t") for r in _lines(out / "xnli/multinli.train.en.tsv")]
    assert train[0] == ["premise", "hypo", "label"]
    labels = collections.Counter(r[2] for r in train[1:])
    assert labels == {"entailment": 20, "neutral": 20, "contradictory": 20}


def test_parallel_files_align_line_by_line(out):
    n = TINY_SPEC["sizes"]["parallel"]
    words = {
        lang: [w.split(" ") for w in _lines(out / f"parallel/{lang}.words.txt")] for lang in LANGS
    }
    for lang in LANGS:
        assert len(_lines(out / f"parallel/{lang}.txt")) == len(words[lang]) == n
    for lang in OTHERS:
        links = _lines(out / f"parallel/align/en-{lang}.txt")
        assert len(links) == n
        for en, x, line in zip(words["en"], words[lang], links, strict=True):
            pairs = [tuple(map(int, link.split("-"))) for link in line.split(" ")]
            assert all(0 <= i < len(en) and 0 <= j < len(x) for i, j in pairs)
            assert (len(en) - 1, len(x) - 1) in pairs  # the final punctuation


def test_dictionaries_are_translations_with_disjoint_splits(out):
    toy = build(TINY_SPEC)
    en = toy.lexicons["en"]
    # en' writes English's words: a dictionary of identical pairs only.
    assert dictionary_languages(TINY_SPEC) == [lang for lang in OTHERS if lang != "enp"]
    assert not list(out.glob("muse/en-enp.*"))
    for lang in dictionary_languages(TINY_SPEC):
        lx = toy.lexicons[lang]
        translations = {en.citation(i): lx.citation(i) for i in toy.world.content_lexemes()}
        sources = {}
        for split in ("train", "test"):
            entries = [line.split(" ") for line in _lines(out / f"muse/en-{lang}.{split}.txt")]
            assert len(entries) == TINY_SPEC["sizes"]["muse"][split]
            assert all(translations[s] == t for s, t in entries), lang
            assert any(s != t for s, t in entries), lang
            sources[split] = {s for s, _ in entries}
        assert not sources["train"] & sources["test"]
        # The parallel data use them: a dictionary word is aligned to a form of its translation.
        en_words = [w.split(" ") for w in _lines(out / "parallel/en.words.txt")]
        x_words = [w.split(" ") for w in _lines(out / f"parallel/{lang}.words.txt")]
        links = _lines(out / f"parallel/align/en-{lang}.txt")
        checked = 0
        for e, x, line in zip(en_words, x_words, links, strict=True):
            for i, j in (map(int, link.split("-")) for link in line.split(" ")):
                source = e[i].casefold()
                if source in translations and e[i] in (source, source.capitalize()):
                    assert x[j].casefold().startswith(translations[source].casefold()), (e[i], x[j])
                    checked += 1
        assert checked > 100, lang


def test_tatoeba_pairs_are_aligned_and_distinct(out):
    for lang in OTHERS:
        en = _lines(out / f"tatoeba/en-{lang}.en.txt")
        x = _lines(out / f"tatoeba/en-{lang}.{lang}.txt")
        assert len(en) == len(x) == TINY_SPEC["sizes"]["tatoeba"]
        assert len(set(en)) == len(en) and len(set(x)) == len(x)


def test_atomic_write_leaves_nothing_when_interrupted(tmp_path):
    from xling.base.atomic import atomic_write

    def chunks():
        yield "first line\n"
        raise KeyboardInterrupt  # killed mid-file

    with pytest.raises(KeyboardInterrupt):
        atomic_write(tmp_path / "corpus/en.txt", chunks())
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
    atomic_write(tmp_path / "corpus/en.txt", iter(["a\n", "b\n"]))
    assert (tmp_path / "corpus/en.txt").read_text() == "a\nb\n"


def test_invalid_spec_writes_nothing(tmp_path):
    spec = copy.deepcopy(TINY_SPEC)
    spec["languages"] = ["en", "xx"]
    with pytest.raises(ValueError, match=r"profiles\.xx"):
        generate(spec, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_demo_config_resolves_to_demo_spec():
    """config/demo.yaml names the demo preset, so the demo run and these tests use one spec."""
    yaml = pytest.importorskip("yaml")
    config = Path(__file__).resolve().parents[1] / "config" / "demo.yaml"
    section = yaml.safe_load(config.read_text(encoding="utf-8"))["data"]["toyworld"]
    assert resolve_spec(section) == DEMO_SPEC


def test_preset_overrides_merge_deeply():
    spec = resolve_spec(
        {"preset": "tiny", "sizes": {"parallel": 7}, "profiles": {"fr": {"anchor_share": 0.0}}}
    )
    assert spec["sizes"]["parallel"] == 7
    assert spec["sizes"]["corpus"] == TINY_SPEC["sizes"]["corpus"]
    assert spec["profiles"]["fr"]["anchor_share"] == 0.0
    assert spec["profiles"]["fr"]["word_order"] == TINY_SPEC["profiles"]["fr"]["word_order"]
    assert TINY_SPEC["sizes"]["parallel"] != 7  # the preset itself is untouched
    with pytest.raises(ValueError, match="unknown preset 'huge'"):
        resolve_spec({"preset": "huge"})
