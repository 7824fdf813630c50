"""Adapter: one language of one NER dataset into the WikiAnn format (from data.manual_dir)."""

import _bootstrap

from xling.acquire.ner_import import import_ner, jieba_segment

# Character-preserving segmenters for realigning character-level labels (Levow 2006) to the
# words the pretraining corpus was cut into.
REALIGNING_SEGMENTERS = {"jieba": jieba_segment}


def main(smk):
    segmenter = smk.params.segmenter
    segment = REALIGNING_SEGMENTERS.get(segmenter)
    if smk.wildcards.dataset == "levow2006" and segment is None:
        raise ValueError(
            f"languages.{smk.wildcards.lang}.segmenter is {segmenter!r}, which cannot realign "
            f"character-level NER labels; use one of {sorted(REALIGNING_SEGMENTERS)}"
        )
    outputs = dict(smk.output.items())  # split -> file, named in the rule
    counts = import_ner(
        smk.wildcards.dataset, smk.wildcards.lang, smk.params.manual_dir, outputs, segment
    )
    print(f"sentences: {counts}")


_bootstrap.run(main, snakemake)
