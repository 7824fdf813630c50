"""The toy world's public entry points: `output_paths(spec)` and `generate(spec, out_dir)`.

Every output draws from its own random stream, named after the output and seeded from the spec's
seed (string seeds go through SHA-512, so nothing depends on PYTHONHASHSEED); one language or
size never changes another output's bytes.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from xling.base.atomic import atomic_write
from xling.contracts import layout
from xling.contracts.alignment import format_alignment
from xling.contracts.conllu import format_conllu_sentence
from xling.contracts.muse import format_muse_entry
from xling.contracts.ner import format_ner_sentence
from xling.contracts.xnli import (
    XNLI_COLUMNS,
    XNLI_MT_COLUMNS,
    format_header,
    format_xnli_mt_row,
    format_xnli_row,
)

from .concepts import World, build_world
from .gold import alignment_links, conllu_words, gold_words, xnli_cells
from .lexicon import Lexicon, build_lexicon
from .meanings import MeaningSampler, Sentence
from .nli import LABELS, HypothesisMaker, judge
from .realize import Grammar, Token, text_of
from .schema import DOMAINS, SPLITS, validate_spec

DATASET = "toy"  # the NER and UD dataset name in output paths (docs/contracts.md)
# One-domain NER and UD sets, for training in one domain and testing in the other (Muller et al.
# 2021, Table 2): dataset name -> (domain, splits). Sizes per split are those of `toy`.
DOMAIN_DATASETS = {"toy_wiki": ("wiki", SPLITS), "toy_cc": ("cc", ("dev", "test"))}
REFERENCE_SENTENCES = 2000  # English sample whose word types anchor_share counts
MUSE_SPLITS = ("train", "test")


def output_paths(spec: dict) -> list[str]:
    """Every file `generate(spec, ...)` writes, relative to its out_dir (cheap: no generation)."""
    validate_spec(spec)
    langs = spec["languages"]
    others = [lang for lang in langs if lang != "en"]
    paths = [layout.corpus(d, lang) for d in DOMAINS for lang in langs]
    paths += [p for lang in langs for p in (layout.parallel(lang), layout.parallel_words(lang))]
    paths += [layout.alignment("en", lang) for lang in others]
    paths += [layout.segmenter_dictionary(lang) for lang in unspaced_languages(spec)]
    paths += [layout.ner(DATASET, lang, s) for lang in langs for s in SPLITS]
    paths += [layout.xnli("dev"), layout.xnli("test"), layout.xnli_train()]
    paths += [layout.ud(DATASET, lang, s) for lang in langs for s in SPLITS]
    paths += [
        layout.muse("en", lang, s) for lang in dictionary_languages(spec) for s in MUSE_SPLITS
    ]
    paths += [layout.tatoeba("en", lang, side) for lang in others for side in ("en", lang)]
    for dataset, (_, splits) in DOMAIN_DATASETS.items():
        paths += [layout.ner(dataset, lang, s) for lang in langs for s in splits]
        paths += [layout.ud(dataset, lang, s) for lang in langs for s in splits]
    return paths


def dictionary_languages(spec: dict) -> list[str]:
    """The languages a MUSE dictionary from English is written for: every one but English that
    writes some word differently from it (en', anchor share 1, would get identical pairs only,
    as MUSE has no English-English dictionary)."""
    profiles = spec["profiles"]
    return [lang for lang in spec["languages"] if profiles[lang]["anchor_share"] < 1]


def unspaced_languages(spec: dict) -> list[str]:
    """The languages written without spaces between words: the toy world gives each a segmenter
    dictionary (no real segmenter knows toy words; jieba cuts unknown text into characters)."""
    return [lang for lang in spec["languages"] if spec["profiles"][lang]["separator"] == ""]


@dataclass
class ToyWorld:
    """A built world: concepts, one lexicon and grammar per language, one sampler per domain."""

    spec: dict
    world: World
    lexicons: dict[str, Lexicon]
    grammars: dict[str, Grammar]
    samplers: dict[str, MeaningSampler]

    def rng(self, *stream: str) -> random.Random:
        """The random stream of one output, e.g. rng("corpus", "wiki", "fr")."""
        return random.Random("/".join([str(self.spec["seed"]), *stream]))

    def realize(self, lang: str, sentence: Sentence, rng: random.Random) -> list[Token]:
        return self.grammars[lang].realize(sentence, rng)

    def text(self, lang: str, tokens: list[Token]) -> str:
        return text_of(tokens, self.spec["profiles"][lang]["separator"])


def build(spec: dict) -> ToyWorld:
    """Validate the spec and build the world, lexicons and grammars (no sentences yet)."""
    validate_spec(spec)
    seed = str(spec["seed"])
    world = build_world(spec["lexicon"], random.Random(f"{seed}/world"))
    lex = spec["lexicon"]
    samplers = {
        d: MeaningSampler(
            world,
            spec["domains"][d],
            lex["zipf_exponent"],
            lex["topic_boost"],
            lex["senses"]["strength"],
        )
        for d in DOMAINS
    }
    en_rng = random.Random(f"{seed}/lexicon/en")
    english = build_lexicon("en", spec["profiles"]["en"], world, en_rng, None)
    toy = ToyWorld(spec, world, {"en": english}, {"en": Grammar(english, world)}, samplers)
    reference = reference_types(toy)
    for lang in spec["languages"]:
        if lang != "en":
            rng = random.Random(f"{seed}/lexicon/{lang}")
            lexicon = build_lexicon(lang, spec["profiles"][lang], world, rng, english, reference)
            toy.lexicons[lang], toy.grammars[lang] = lexicon, Grammar(lexicon, world)
    return toy


def reference_types(toy: ToyWorld) -> set[str]:
    """The English word types (case-folded, punctuation left out) of a fixed reference sample of
    REFERENCE_SENTENCES sentences from both domains: the types `anchor_share` is a share of.

    Counting the types of running text rather than every form the grammar could produce keeps the
    share measured on any sample of similar size close to the configured one; every possible
    form would over-count rare inflections and so under-weight the frequent anchors (numbers,
    names).
    """
    rng = toy.rng("anchors")
    types: set[str] = set()
    for sentence in _mixed(toy, rng, REFERENCE_SENTENCES):
        types.update(
            t.form.casefold() for t in toy.realize("en", sentence, rng) if t.upos != "PUNCT"
        )
    return types


def generate(spec: dict, out_dir: str | Path) -> list[str]:
    """Write every file of `output_paths(spec)` under `out_dir`; return their paths.

    Raises ValueError (naming the spec key and the fix) for an invalid spec.
    """
    paths = output_paths(spec)
    toy = build(spec)
    out = Path(out_dir)
    files = _Sink(out, paths)
    writers = (_corpora, _parallel, _tagged, _xnli, _muse, _tatoeba, _domain_tagged, _dictionaries)
    for write in writers:
        write(toy, files)
    if files.written != set(paths):  # a bug in this module, never the user's
        missing = sorted(set(paths) - files.written)
        raise RuntimeError(f"toyworld wrote no {missing}, which output_paths declares")
    return [str(out / rel) for rel in paths]


class _Sink:
    """`files[rel] = lines` writes one output at once (atomically), so memory holds one file."""

    def __init__(self, out: Path, declared: list[str]) -> None:
        self.out, self.declared, self.written = out, set(declared), set()

    def __setitem__(self, rel: str, chunks: Iterable[str]) -> None:
        if rel not in self.declared:  # a bug in this module, never the user's
            raise RuntimeError(f"toyworld would write {rel}, which output_paths does not declare")
        atomic_write(self.out / rel, chunks)
        self.written.add(rel)


def _dictionaries(toy: ToyWorld, files: _Sink) -> None:
    # Every word form, one a line without a frequency: jieba then gives each the frequency that
    # keeps it whole, as a real segmenter's dictionary keeps a language's words whole.
    for lang in unspaced_languages(toy.spec):
        words = sorted(toy.lexicons[lang].types())
        files[layout.segmenter_dictionary(lang)] = (f"{word}\n" for word in words)


def _corpora(toy: ToyWorld, files: _Sink) -> None:
    for domain in DOMAINS:
        sampler = toy.samplers[domain]
        document = toy.spec["lexicon"]["senses"]["document_sentences"]
        for lang in toy.spec["languages"]:
            rng = toy.rng("corpus", domain, lang)
            n = toy.spec["sizes"]["corpus"][domain]
            files[layout.corpus(domain, lang)] = (  # streamed: corpora are the big files
                toy.text(lang, toy.realize(lang, meaning, rng)) + "\n"
                for meaning in _documents(sampler, rng, n, document)
            )


def _documents(
    sampler: MeaningSampler, rng: random.Random, n: int, length: int
) -> Iterable[Sentence]:
    """n meanings in documents of `length` consecutive sentences that share one context (topic
    and scene), as the sentences of a Wikipedia paragraph share what it is about."""
    for i in range(n):
        if i % length == 0:
            context = sampler.topic(rng)
        yield sampler.sentence(rng, context)


def _mixed(toy: ToyWorld, rng: random.Random, n: int) -> list[Sentence]:
    """n meanings, alternating the domains (parallel data and treebanks mix genres)."""
    return [toy.samplers[DOMAINS[i % len(DOMAINS)]].sentence(rng) for i in range(n)]


def _parallel(toy: ToyWorld, files: _Sink) -> None:
    meanings = _mixed(toy, toy.rng("parallel"), toy.spec["sizes"]["parallel"])
    realized = {}
    for lang in toy.spec["languages"]:
        rng = toy.rng("parallel", lang)
        realized[lang] = [toy.realize(lang, m, rng) for m in meanings]
        files[layout.parallel(lang)] = [toy.text(lang, t) + "\n" for t in realized[lang]]
        files[layout.parallel_words(lang)] = [gold_words(t) + "\n" for t in realized[lang]]
    for lang in toy.spec["languages"]:
        if lang != "en":
            files[layout.alignment("en", lang)] = [
                format_alignment(alignment_links(en, x))
                for en, x in zip(realized["en"], realized[lang], strict=True)
            ]


def _tagged(toy: ToyWorld, files: _Sink) -> None:
    """NER (Wikipedia sentences that name an entity, as WikiAnn) and UD (both domains)."""
    sizes = toy.spec["sizes"]
    for lang in toy.spec["languages"]:
        for split in SPLITS:
            rng = toy.rng("ner", lang, split)
            files[layout.ner(DATASET, lang, split)] = _ner_blocks(
                toy, lang, toy.samplers["wiki"], rng, sizes["ner"][split]
            )
            rng = toy.rng("ud", lang, split)
            meanings = _mixed(toy, rng, sizes["ud"][split])
            files[layout.ud(DATASET, lang, split)] = _ud_blocks(
                toy, lang, meanings, rng, f"{DATASET}-{lang}-{split}"
            )


def _domain_tagged(toy: ToyWorld, files: _Sink) -> None:
    """NER and UD sets of one domain each (DOMAIN_DATASETS), from their own random streams: NER
    sentences of the domain that name an entity, UD sentences of the domain."""
    sizes = toy.spec["sizes"]
    for dataset, (domain, splits) in DOMAIN_DATASETS.items():
        sampler = toy.samplers[domain]
        for lang in toy.spec["languages"]:
            for split in splits:
                rng = toy.rng("ner", domain, lang, split)
                files[layout.ner(dataset, lang, split)] = _ner_blocks(
                    toy, lang, sampler, rng, sizes["ner"][split]
                )
                rng = toy.rng("ud", domain, lang, split)
                meanings = [sampler.sentence(rng) for _ in range(sizes["ud"][split])]
                files[layout.ud(dataset, lang, split)] = _ud_blocks(
                    toy, lang, meanings, rng, f"{dataset}-{lang}-{split}"
                )


def _ner_blocks(
    toy: ToyWorld, lang: str, sampler: MeaningSampler, rng: random.Random, n: int
) -> list[str]:
    """n WikiAnn sentences from ``sampler``, each naming at least one entity."""
    blocks = []
    for _ in range(n):
        sentence = sampler.sentence_with_entity(rng)
        tokens = toy.realize(lang, sentence, rng)
        blocks.append(format_ner_sentence(lang, [t.form for t in tokens], [t.ner for t in tokens]))
    return blocks


def _ud_blocks(
    toy: ToyWorld, lang: str, meanings: list[Sentence], rng: random.Random, sent_id: str
) -> list[str]:
    """CoNLL-U sentences realizing ``meanings``, numbered ``{sent_id}-00001`` on."""
    blocks = []
    for i, sentence in enumerate(meanings, 1):
        tokens = toy.realize(lang, sentence, rng)
        comments = {"sent_id": f"{sent_id}-{i:05d}", "text": toy.text(lang, tokens)}
        blocks.append(format_conllu_sentence(comments, conllu_words(tokens)))
    return blocks


def nli_pairs(toy: ToyWorld, split: str, n_pairs: int):
    """(premise, hypothesis, label, prompt id, pair id, genre) meaning tuples of one split."""
    rng = toy.rng("xnli", split)
    out = []
    for prompt in range(n_pairs // 3):
        domain = DOMAINS[prompt % len(DOMAINS)]
        maker = HypothesisMaker(toy.world, toy.samplers[domain])
        premise = maker.premise(rng)
        labels = list(LABELS)
        rng.shuffle(labels)
        for k, label in enumerate(labels):
            hyp = maker.hypothesis(rng, premise, label)
            assert judge(toy.world, premise, hyp) == label
            out.append(
                (Sentence(premise), Sentence(hyp), label, prompt + 1, 3 * prompt + k + 1, domain)
            )
    return out


def _xnli(toy: ToyWorld, files: _Sink) -> None:
    sizes = toy.spec["sizes"]["xnli"]
    pairs = nli_pairs(toy, "train", sizes["train"])
    rng = toy.rng("xnli", "train", "en")
    rows = [format_header(XNLI_MT_COLUMNS)]
    for premise, hyp, label, *_ in pairs:
        p, h = toy.realize("en", premise, rng), toy.realize("en", hyp, rng)
        rows.append(format_xnli_mt_row(toy.text("en", p), toy.text("en", h), label))
    files[layout.xnli_train()] = rows
    for split in ("dev", "test"):
        pairs = nli_pairs(toy, split, sizes[split])
        rows = [format_header(XNLI_COLUMNS)]
        for lang in toy.spec["languages"]:
            rng = toy.rng("xnli", split, lang)
            cache: dict[int, tuple[str, str]] = {}
            for premise, hyp, label, prompt, pair, genre in pairs:
                if prompt not in cache:  # one realization per premise, as XNLI translates it once
                    tokens = toy.realize(lang, premise, rng)
                    cache[prompt] = (toy.text(lang, tokens), gold_words(tokens))
                tokens = toy.realize(lang, hyp, rng)
                hypothesis = (toy.text(lang, tokens), gold_words(tokens))
                cells = xnli_cells(lang, label, cache[prompt], hypothesis, prompt, pair, genre)
                rows.append(format_xnli_row(cells))
        files[layout.xnli(split)] = rows


def dictionary_words(toy: ToyWorld) -> list[int]:
    """Content lexemes from most to least frequent (MUSE sorts its dictionaries by frequency)."""
    world = toy.world
    return sorted(
        world.content_lexemes(),
        key=lambda i: (world.lexemes[i].rank / world.lexemes[i].group_size, i),
    )


def _muse(toy: ToyWorld, files: _Sink) -> None:
    sizes = toy.spec["sizes"]["muse"]
    ordered = dictionary_words(toy)
    splits = {
        "train": ordered[: sizes["train"]],
        "test": ordered[sizes["train"] : sizes["train"] + sizes["test"]],
    }
    en = toy.lexicons["en"]
    for lang in dictionary_languages(toy.spec):
        lx = toy.lexicons[lang]
        for split, lexemes in splits.items():
            files[layout.muse("en", lang, split)] = [
                format_muse_entry(en.citation(i), lx.citation(i)) for i in lexemes
            ]


def _tatoeba(toy: ToyWorld, files: _Sink) -> None:
    """Short everyday (cc) sentences; every sentence unique on each side, so retrieval is sound."""
    langs = toy.spec["languages"]
    rng = toy.rng("tatoeba")
    rngs = {lang: toy.rng("tatoeba", lang) for lang in langs}
    seen: dict[str, set[str]] = {lang: set() for lang in langs}
    lines: dict[str, list[str]] = {lang: [] for lang in langs}
    target = toy.spec["sizes"]["tatoeba"]
    for _ in range(100 * target):
        if len(lines["en"]) == target:
            break
        sentence = toy.samplers["cc"].sentence(rng)
        texts = {lang: toy.text(lang, toy.realize(lang, sentence, rngs[lang])) for lang in langs}
        if any(texts[lang] in seen[lang] for lang in langs):
            continue
        for lang in langs:
            seen[lang].add(texts[lang])
            lines[lang].append(texts[lang] + "\n")
    if len(lines["en"]) < target:
        raise ValueError(
            "toyworld spec key 'sizes.tatoeba': too many sentences for the meaning "
            "space to keep them distinct; lower it or enlarge the lexicon"
        )
    for lang in langs:
        if lang != "en":
            files[layout.tatoeba("en", lang, "en")] = lines["en"]
            files[layout.tatoeba("en", lang, lang)] = lines[lang]
