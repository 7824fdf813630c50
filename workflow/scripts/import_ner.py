"""Adapter: one language of one NER dataset into the WikiAnn format (from data.manual_dir)."""

import _bootstrap

from xling.acquire.ner_import import import_ner, jieba_segmenter
from xling.preprocess import TextPipeline

# Character-preserving segmenters for realigning character-level labels (Levow 2006) to the
# words the pretraining corpus was cut into, built from the language's user words.
REALIGNING_SEGMENTERS = {"jieba": jieba_segmenter}


def main(smk):
    pipeline = TextPipeline.from_dict(smk.params.pipeline)
    segment = None
    if smk.wildcards.dataset == "levow2006":
        if pipeline.segmenter not in REALIGNING_SEGMENTERS:
            raise ValueError(
                f"languages.{smk.wildcards.lang}.segmenter is {pipeline.segmenter!r}, which cannot"
                f" realign character-level NER labels; use one of {sorted(REALIGNING_SEGMENTERS)}"
            )
        segment = REALIGNING_SEGMENTERS[pipeline.segmenter](pipeline.user_words)
    outputs = dict(smk.output.items())  # split -> file, named in the rule
    counts = import_ner(
        smk.wildcards.dataset, smk.wildcards.lang, smk.params.manual_dir, outputs, segment
    )
    print(f"sentences: {counts}")


_bootstrap.run(main, snakemake)
