"""Adapter: word alignments of the parallel sentences with eflomal (Wu 5.1.2; docs/alignment.md)."""

import _bootstrap


def main(smk):
    from xling.analysis.wordalign import align_words
    from xling.base.fileio import read_lines

    limit = smk.params.sentences
    source = [line.split() for line in read_lines(smk.input.source, limit)]
    target = [line.split() for line in read_lines(smk.input.target, limit)]
    links = align_words(source, target, smk.output[0])  # eflomal cannot be seeded
    print(f"{sum(len(s) for s in links)} links in {len(links)} sentence pairs")


_bootstrap.run(main, snakemake)
