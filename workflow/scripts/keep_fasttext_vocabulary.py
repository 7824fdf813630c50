"""Adapter: the first N words of the published fastText vectors (Wu 5.1.1: the first 200k)."""

import _bootstrap

from xling.analysis.fasttext_vectors import keep_first_words


def main(smk):
    kept, skipped = keep_first_words(smk.input[0], smk.output[0], smk.params.vocabulary)
    print(f"{kept} word vectors kept")
    if skipped:
        shown = ", ".join(map(str, skipped[:20])) + (" ..." if len(skipped) > 20 else "")
        print(f"{len(skipped)} malformed lines skipped, as MUSE skips them: lines {shown}")


_bootstrap.run(main, snakemake)
