"""How much disk a study's jobs will write under ``results/<study>/``, estimated from the config and
the jobs still to run, before anything is downloaded.

Known sizes (GB, rounded; every dump differs a little, and the download jobs print the real size):

================  =====================================================  ========================
what              GB per language                                        source
================  =====================================================  ========================
Wikipedia dump    en 22, de 7, fr 6, ru 6, zh 3                          dumps.wikimedia.org, the
``pages-articles                                                         listings of the 2024
.xml.bz2``                                                               and 2025 dumps
CC-100            en 82, ru 46, de 18, fr 14, zh-Hans 14                 data.statmt.org/cc-100,
``<lang>.txt.xz``                                                        its table of file sizes
fastText          en 6.6, de 5.8, ru 4.8, fr 2.9, zh 0.9: the            Bojanowski et al. (2017)
``wiki.<lang>.vec``  vocabularies (2.5M, 2.3M, 1.9M, 1.2M, 0.33M words)  and the files' listing
                  x 300 numbers of about 8.7 characters
archives          XNLI 0.02, XNLI-MT 0.45, UD v2.3 0.3, UD v2.4 0.35     the release pages
mBERT             0.7 (``model.safetensors``; the other files are kB)    the Hugging Face Hub
================  =====================================================  ========================

Derived, per job of the plan:

* Wikipedia's plain text (``extract_wikipedia``) is about its dump's size (:data:`TEXT_PER_DUMP`:
  the markup it drops weighs about what bzip2 saved); a CC-100 sample (``sample_commoncrawl``) is
  sized to its language's Wikipedia text (Wu 4.1);
* tokenized text is 1.1 x the text (Moses puts spaces around punctuation); the shards are
  temporary (deleted once split), the splits stay;
* a binarized corpus (``build_vocab``) is 0.9 x its tokenized text: int32 per BPE token at about
  1.3 tokens a word of 5.7 characters (0.86 measured on the demo's corpora);
* a model is 4 bytes a parameter (fp32 safetensors; parameters from config ``model`` and the
  vocabulary: 80k joint merges, 40k per language); while it trains, its work directory keeps two
  checkpoints of weights and Adam's two moments (3 x the model each), which the finished job
  replaces by hard links to its outputs;
* a fine-tuning run keeps its scores and predictions (a few MB); while it trains, its work
  directory holds two epochs' weights and the optimizer (4 x the model), deleted once it ends;
  those of the jobs running at once (the profile's ``jobs``) count at the peak;
* contextual word vectors are float32: vocabulary x (layers + 1) x dim;
* every other job: tables, figures, scores, logs, :data:`SMALL_GB` each.

For the toy world (``data.source: toyworld``) no size is known in advance: its corpora count as
small files, which they are.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from xling.cluster.expected import ASSUMED_VOCAB
from xling.cluster.plan import STAGE_ORDER, JobRequest

WIKIPEDIA_DUMP_GB = {"en": 22.0, "de": 7.0, "fr": 6.0, "ru": 6.0, "zh": 3.0}
CC100_XZ_GB = {"en": 82.0, "ru": 46.0, "de": 18.0, "fr": 14.0, "zh": 14.0}
FASTTEXT_VEC_GB = {"en": 6.6, "de": 5.8, "ru": 4.8, "fr": 2.9, "zh": 0.9}
FASTTEXT_GB_PER_WORD = 300 * 8.7 / 1e9
ARCHIVE_GB = {"xnli": 0.02, "xnli_mt": 0.45, "ud23": 0.3, "ud24": 0.35}
UNPACKED_PER_ARCHIVE = 5.0  # CoNLL-U and tsv text, zip- or gzip-compressed about 5:1
MBERT_WEIGHTS_GB = 0.7
MBERT_PARAMETERS = 178e6
UNKNOWN_LANGUAGE_GB = 2.0  # a language outside the tables
TEXT_PER_DUMP = 1.0
TOKENIZED_PER_TEXT = 1.1
BINARIZED_PER_TOKENIZED = 0.9
CHECKPOINTS_KEPT = 2
SMALL_GB = 0.01
GB = 1e9


@dataclass(frozen=True)
class JobDisk:
    """What one job leaves (``final``) and holds while it runs (``transient``), in GB."""

    final: float
    transient: float = 0.0
    source: str = ""  # how the number is derived, shortly


def _known(table: Mapping[str, float], lang: str) -> float:
    return table.get(lang, UNKNOWN_LANGUAGE_GB)


def downloads_data(config: Mapping[str, Any]) -> bool:
    return (config.get("data") or {}).get("source") == "download"


def text_gb(config: Mapping[str, Any], domain: str, lang: str) -> float | None:
    """A language's plain text of one domain (Wikipedia, or CC-100 sampled to its size)."""
    if not downloads_data(config):
        return None
    return _known(WIKIPEDIA_DUMP_GB, lang) * TEXT_PER_DUMP


def encoder_parameters(config: Mapping[str, Any], vocab: int, sep_embeddings: bool) -> float:
    """Parameters of an encoder of config ``model``: embeddings (one table a language when
    separate), positions, and per layer the attention and feed-forward weights."""
    model = config["model"]
    dim, ffn, layers = int(model["dim"]), int(model["ffn_dim"]), int(model["layers"])
    embeddings = vocab * dim * (2 if sep_embeddings else 1) + int(model["max_positions"]) * dim
    per_layer = 4 * dim * dim + 2 * dim * ffn + 9 * dim + ffn  # weights, biases, layer norms
    return embeddings + layers * per_layer + vocab  # the output bias (weights tied)


def _model_gb(config: Mapping[str, Any], request: JobRequest) -> float:
    variant = (config.get("variants") or {}).get(request.wildcard("variant")) or {}
    if request.rule == "pretrain_monolingual":
        vocab = int((config.get("monolingual") or {}).get("merges", ASSUMED_VOCAB // 2))
    else:
        vocab = ASSUMED_VOCAB
    return encoder_parameters(config, vocab, bool(variant.get("sep_embeddings"))) * 4 / GB


def _corpus_gb(config: Mapping[str, Any], domain: str, lang: str) -> float:
    text = text_gb(config, domain, lang)
    return SMALL_GB if text is None else text


def acquire_disk(config: Mapping[str, Any], request: JobRequest) -> JobDisk | None:
    lang, rule = request.wildcard("lang"), request.rule
    if rule == "download_wikipedia":
        return JobDisk(_known(WIKIPEDIA_DUMP_GB, lang), source="Wikipedia dumps (known sizes)")
    if rule == "extract_wikipedia":
        return JobDisk(_corpus_gb(config, "wiki", lang), source="text ~ the dump's size")
    if rule == "download_commoncrawl":
        return JobDisk(_known(CC100_XZ_GB, lang), source="CC-100 .txt.xz (known sizes)")
    if rule == "sample_commoncrawl":
        return JobDisk(_corpus_gb(config, "cc", lang), source="its Wikipedia text's size")
    if rule == "download_fasttext":
        return JobDisk(_known(FASTTEXT_VEC_GB, lang), source="fastText .vec (known sizes)")
    if rule == "download":
        gb = ARCHIVE_GB.get(request.wildcard("resource"), SMALL_GB)
        return JobDisk(gb, source="archives (known sizes)")
    if rule == "unpack":
        gb = ARCHIVE_GB.get(request.wildcard("resource"), SMALL_GB) * UNPACKED_PER_ARCHIVE
        return JobDisk(gb, source=f"{UNPACKED_PER_ARCHIVE:g} x the archive")
    if rule == "download_transformers_file":
        weights = request.wildcard("file").endswith((".safetensors", ".bin"))
        return JobDisk(MBERT_WEIGHTS_GB if weights else SMALL_GB, source="mBERT's files")
    return None


def corpus_disk(config: Mapping[str, Any], request: JobRequest) -> JobDisk | None:
    lang, domain, rule = request.wildcard("lang"), request.wildcard("domain"), request.rule
    if rule == "shard_corpus":
        return JobDisk(0.0, _corpus_gb(config, domain, lang), "temporary shards of the text")
    if rule == "tokenize_shard":
        shards = int((config.get("preprocess") or {}).get("shards") or 1)
        gb = _corpus_gb(config, domain, lang) * TOKENIZED_PER_TEXT / shards
        return JobDisk(0.0, gb, "temporary tokenized shards")
    if rule == "split_corpus":
        gb = _corpus_gb(config, domain, lang) * TOKENIZED_PER_TEXT
        return JobDisk(gb, source="1.1 x the text")
    per_text = TOKENIZED_PER_TEXT * BINARIZED_PER_TOKENIZED
    if rule == "build_vocab":
        source, target = request.wildcard("pair").split("-")
        first, second = (request.wildcard("domains") or "wiki-wiki").split("-")
        gb = (_corpus_gb(config, first, source) + _corpus_gb(config, second, target)) * per_text
        return JobDisk(gb, source="binarized: 0.9 x the tokenized text")
    if rule in ("build_monolingual_vocab", "build_multilingual_vocab"):
        return JobDisk(_corpus_gb(config, "wiki", lang) * per_text, source="binarized text")
    return None


def training_disk(config: Mapping[str, Any], request: JobRequest) -> JobDisk | None:
    rule = request.rule
    if rule.startswith("pretrain_"):
        model = _model_gb(config, request)
        work = CHECKPOINTS_KEPT * 3 * model
        return JobDisk(model, work, "4 B a parameter; 2 checkpoints with Adam while training")
    runs = int(request.wildcard("runs") or 1)
    if rule in ("finetune_run", "finetune_pack", "finetune_model"):
        return JobDisk(runs * 0.005, 4 * _model_gb(config, request), "a run's scores; 4 x model")
    if rule == "muller_finetune":
        return JobDisk(runs * 0.005, 4 * MBERT_PARAMETERS * 4 / GB, "a run's scores; 4 x mBERT")
    if rule == "contextual_word_vectors":
        words = int(config["analysis"]["word_alignment"]["vocabulary"])
        model = config["model"]
        gb = words * (int(model["layers"]) + 1) * int(model["dim"]) * 4 / GB
        return JobDisk(gb, source="float32 words x (layers + 1) x dim")
    if rule == "keep_fasttext_vocabulary":
        words = int(config["analysis"]["word_alignment"]["vocabulary"])
        return JobDisk(words * FASTTEXT_GB_PER_WORD, source="the first words of the .vec")
    return None


def job_disk(config: Mapping[str, Any], request: JobRequest) -> JobDisk:
    for estimate in (acquire_disk, corpus_disk, training_disk):
        found = estimate(config, request)
        if found is not None:
            return found
    return JobDisk(SMALL_GB, source="small files")


@dataclass
class RuleDisk:
    jobs: int = 0
    final: float = 0.0
    transient_each: float = 0.0  # the largest of one job
    transient_all: float = 0.0  # every job's at once
    source: str = ""


def disk_by_rule(
    requests: Iterable[JobRequest], config: Mapping[str, Any]
) -> dict[tuple[str, str], RuleDisk]:
    """Estimates summed by (stage, rule), in the plan's stage order."""
    order = {stage: i for i, stage in enumerate(STAGE_ORDER)}
    totals: dict[tuple[str, str], RuleDisk] = defaultdict(RuleDisk)
    for request in sorted(requests, key=lambda r: (order.get(r.stage, len(order)), r.rule)):
        estimate = job_disk(config, request)
        total = totals[(request.stage, request.rule)]
        total.jobs += 1
        total.final += estimate.final
        total.transient_each = max(total.transient_each, estimate.transient)
        total.transient_all += estimate.transient
        total.source = estimate.source
    return dict(totals)


def peak_transient(rule: RuleDisk, at_once: int | None) -> float:
    """What a rule's jobs hold at once: all of them, or ``at_once`` of the largest."""
    if at_once is None:
        return rule.transient_all
    return min(rule.transient_all, at_once * rule.transient_each)


def format_disk(
    requests: Sequence[JobRequest], config: Mapping[str, Any], at_once: int | None
) -> tuple[list[str], float, float]:
    """The estimate per stage and rule; with the total left at the end and the peak on the
    way (the largest stage's temporary files and work directories on top of everything
    written before it)."""
    rules = disk_by_rule(requests, config)
    lines = [f"{'stage':<11}{'rule':<28}{'jobs':>6}{'GB left':>10}{'GB peak':>10}  derived from"]
    final_total, peak = 0.0, 0.0
    for stage in dict.fromkeys(stage for stage, _ in rules):
        for (rule_stage, rule), total in rules.items():
            if rule_stage != stage:
                continue
            transient = peak_transient(total, at_once)
            peak = max(peak, final_total + total.final + transient)
            final_total += total.final
            lines.append(
                f"{stage:<11}{rule:<28}{total.jobs:>6,}{total.final:>10,.1f}"
                f"{transient:>10,.1f}  {total.source}"
            )
    peak = max(peak, final_total)
    lines.append(f"{'total':<11}{'':<28}{'':>6}{final_total:>10,.1f}{peak:>10,.1f}")
    return lines, final_total, peak
