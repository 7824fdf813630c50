"""Adapter: the parallel sentences of the similarity analysis as subword ids per language."""

import _bootstrap


def main(smk):
    import torch

    from xling.analysis.loading import load_model_and_tokenizer
    from xling.base.atomic import atomic_open
    from xling.base.fileio import read_lines
    from xling.contracts.conllu import read_conllu, surface_tokens
    from xling.muller.similarity import parallel_ids

    _, tokenizer = load_model_and_tokenizer(smk.params.model)
    words = {}
    for lang in smk.params.languages:
        path = smk.input[lang]
        if path.endswith(".conllu"):
            # as the paper's model reads PUD: its text, "du", not the syntactic words "de le"
            words[lang] = [surface_tokens(sentence) for sentence in read_conllu(path)]
        else:
            words[lang] = [line.split() for line in read_lines(path)]
    ids = parallel_ids(tokenizer, words, smk.params.sentences)
    with atomic_open(smk.output[0], "wb", encoding=None) as handle:
        torch.save(ids, handle)
    print({lang: len(sentences) for lang, sentences in ids.items()}, "sentences")


_bootstrap.run(main, snakemake)
