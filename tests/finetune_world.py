"""Generated data, a tiny tokenizer and tiny random encoders for the fine-tuning tests.

Shared by tests/test_finetune.py and tests/test_transfer.py. The tokenizer is a real
``xling.vocab.SubwordTokenizer`` (BPE) built from generated text; models are saved with
``xling.model.save_pretrained`` as the pretraining stage saves them.
"""

import random

import torch

from xling.finetune import TaskData
from xling.model import EncoderConfig, MLMEncoder, save_pretrained
from xling.preprocess.pipeline import TextPipeline
from xling.vocab import SubwordTokenizer, VocabSettings, build_vocabulary

LANGS = ("en", "fr")


class World:
    """Words of two languages: shared names (anchors), separate common words."""

    def __init__(self, seed=0):
        self.rng = random.Random(seed)
        syllables = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "ve", "da"]

        def word(n):
            return "".join(self.rng.choice(syllables) for _ in range(n))

        self.names = sorted({"Zo" + word(1) for _ in range(40)})
        self.places = sorted({"Qu" + word(2) for _ in range(40)})
        self.nouns = {
            lang: sorted({word(2) + suffix for _ in range(30)})
            for lang, suffix in (("en", ""), ("fr", "e"))
        }
        self.verbs = {"en": ["runs", "sees", "eats"], "fr": ["court", "voit", "mange"]}
        self.dets = {"en": ["the", "a"], "fr": ["le", "un"]}
        self.markers = {
            "en": {"entailment": "yes", "contradiction": "no", "neutral": "maybe"},
            "fr": {"entailment": "oui", "contradiction": "non", "neutral": "peut"},
        }

    def words(self):
        groups = [*self.verbs.values(), *self.nouns.values(), *self.dets.values()]
        groups += [list(markers.values()) for markers in self.markers.values()]
        return [*self.names, *self.places, ".", *(w for group in groups for w in group)]

    def ner_sentence(self, lang):
        words, tags = [], []
        for _ in range(self.rng.randint(3, 8)):
            roll = self.rng.random()
            if tags and tags[-1] != "O":
                words.append(self.rng.choice(self.nouns[lang]))
                tags.append("O")
            elif roll < 0.2:
                words += [self.rng.choice(self.names), self.rng.choice(self.names)]
                tags += ["B-PER", "I-PER"]
            elif roll < 0.3:
                words.append(self.rng.choice(self.places))
                tags.append("B-LOC")
            else:
                words.append(self.rng.choice(self.nouns[lang]))
                tags.append("O")
        return words, tags

    def tree(self, lang):
        """DET NOUN VERB DET (ADJ-less) NOUN . with UD relations."""
        d, n, v = self.dets[lang], self.nouns[lang], self.verbs[lang]
        words = [self.rng.choice(d), self.rng.choice(n), self.rng.choice(v)]
        words += [self.rng.choice(d), self.rng.choice(n), "."]
        heads = [2, 3, 0, 5, 3, 3]
        rels = ["det", "nsubj", "root", "det", "obj", "punct"]
        if self.rng.random() < 0.5:  # a name as the subject instead
            words, heads, rels = words[1:], [2, 0, 4, 2, 2], rels[1:]
            words[0] = self.rng.choice(self.names)
        return words, heads, rels

    def nli_pair(self, lang):
        premise = [self.rng.choice(self.nouns[lang]) for _ in range(self.rng.randint(2, 5))]
        label = self.rng.choice(["entailment", "contradiction", "neutral"])
        hypothesis = [self.markers[lang][label], *self.rng.sample(premise, 2)]
        return " ".join(premise), " ".join(hypothesis), label


def write_ner_file(world, path, lang, n):
    path.parent.mkdir(parents=True, exist_ok=True)
    blocks = []
    for _ in range(n):
        words, tags = world.ner_sentence(lang)
        blocks.append("".join(f"{lang}:{w}\t{t}\n" for w, t in zip(words, tags, strict=True)))
    path.write_text("\n".join(blocks) + "\n", encoding="utf-8")


# The UPOS of each word of World.tree() by its relation (a name subject is PROPN instead).
RELATION_UPOS = {"det": "DET", "nsubj": "NOUN", "root": "VERB", "obj": "NOUN", "punct": "PUNCT"}


def write_treebank(world, path, lang, n):
    path.parent.mkdir(parents=True, exist_ok=True)
    blocks = []
    for i in range(n):
        words, heads, rels = world.tree(lang)
        lines = [f"# sent_id = {i}"]
        for j, (w, h, r) in enumerate(zip(words, heads, rels, strict=True), 1):
            upos = "PROPN" if w in world.names else RELATION_UPOS[r]
            lines.append(f"{j}\t{w}\t{w}\t{upos}\t_\t_\t{h}\t{r}\t_\t_")
        blocks.append("\n".join(lines) + "\n")
    path.write_text("\n".join(blocks) + "\n", encoding="utf-8")


def write_xnli_files(world, root, n_train, n_eval):
    root.mkdir(parents=True, exist_ok=True)
    train = ["premise\thypo\tlabel"]
    for _ in range(n_train):
        premise, hypothesis, label = world.nli_pair("en")
        train.append(f"{premise}\t{hypothesis}\t{label.replace('contradiction', 'contradictory')}")
    (root / "train.tsv").write_text("\n".join(train) + "\n", encoding="utf-8")
    for split in ("dev", "test"):
        rows = ["language\tgold_label\tsentence1\tsentence2\tpairID"]
        for lang in LANGS:
            for i in range(n_eval):
                premise, hypothesis, label = world.nli_pair(lang)
                rows.append(f"{lang}\t{label}\t{premise}\t{hypothesis}\t{lang}{i}")
        (root / f"xnli.{split}.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")


def build_tokenizer(world, root, langs=LANGS, merges=150):
    """A joint BPE over generated sentences of ``langs`` (every character seen); its directory."""
    corpora = {}
    for lang in langs:
        lines = [" ".join(world.ner_sentence(lang)[0]) for _ in range(300)]
        lines += [" ".join(world.tree(lang)[0]) for _ in range(300)]
        lines += [" ".join(world.nli_pair(lang)[:2]) for _ in range(300)]
        path = root / "corpus" / f"{lang}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        corpora[lang] = {"train": path}
    pipelines = {lang: TextPipeline(lang, "moses") for lang in langs}
    build_vocabulary(
        "joint",
        root / "vocab",
        corpora=corpora,
        pipelines=pipelines,
        settings=VocabSettings(merges=merges, bpe_sentences_per_language=2000, seed=0),
    )
    return root / "vocab" / "tokenizer"


def build_world(root):
    """NER, UD and XNLI files of both languages under ``root`` (training files in English only)
    and the joint tokenizer; returns ``(root, tokenizer)``, what ``make_model`` takes."""
    world = World()
    for lang in LANGS:
        for split, n in (("train", 300), ("dev", 80), ("test", 80)):
            if split == "train" and lang != "en":
                continue
            write_ner_file(world, root / "ner" / lang / f"{split}.txt", lang, n)
            write_treebank(world, root / "ud" / lang / f"{split}.conllu", lang, n)
    write_xnli_files(world, root / "xnli", 400, 60)
    return root, SubwordTokenizer.load(build_tokenizer(world, root))


def make_model(
    world,
    out,
    sep_layers=1,
    sep_embeddings=False,
    *,
    languages=LANGS,
    tokenizer_dir=None,
    layers=2,
    name="model",
):
    """A random encoder saved to ``out/name`` with a tokenizer (None: the world's), as the
    pretraining stage saves one."""
    root, tokenizer = world
    if tokenizer_dir is None:
        tokenizer_dir = root / "vocab" / "tokenizer"
    else:
        tokenizer = SubwordTokenizer.load(tokenizer_dir)
    config = EncoderConfig(
        vocab_size=tokenizer.vocab_size,
        languages=list(languages),
        dim=32,
        layers=layers,
        heads=2,
        ffn_dim=64,
        dropout=0.0,
        attention_dropout=0.0,
        max_positions=48,
        sep_layers=sep_layers,
        sep_embeddings=sep_embeddings,
    )
    torch.manual_seed(0)
    return save_pretrained(MLMEncoder(config), out / name, tokenizer_dir)


def task_data(root, task):
    if task == "xnli":
        files = {lang: root / "xnli" / "xnli.dev.tsv" for lang in LANGS}
        tests = {lang: root / "xnli" / "xnli.test.tsv" for lang in LANGS}
        return TaskData(train=root / "xnli" / "train.tsv", dev=files, test=tests)
    sub, ext = ("ner", "txt") if task == "ner" else ("ud", "conllu")  # parsing and pos: ud
    return TaskData(
        train=root / sub / "en" / f"train.{ext}",
        dev={lang: root / sub / lang / f"dev.{ext}" for lang in LANGS},
        test={lang: root / sub / lang / f"test.{ext}" for lang in LANGS},
    )


def spy_languages(monkeypatch):
    """Record (language, training mode) of every encoder forward pass."""
    seen = []
    original = MLMEncoder.forward

    def forward(self, input_ids, lang, *args, **kwargs):
        seen.append((lang, self.training))
        return original(self, input_ids, lang, *args, **kwargs)

    monkeypatch.setattr(MLMEncoder, "forward", forward)
    return seen
