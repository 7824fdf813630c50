"""Adapter: tokenize one raw file line by line (Moses, or jieba for Chinese)."""

import _bootstrap

from xling.preprocess import TextPipeline, tokenize_file


def main(smk):
    pipeline = TextPipeline.from_dict(smk.params.pipeline)
    lines = tokenize_file(smk.input[0], smk.output[0], pipeline)
    print(f"{lines} lines tokenized with {pipeline}")


_bootstrap.run(main, snakemake)
