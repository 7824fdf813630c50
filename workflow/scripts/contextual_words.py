"""Adapter: contextual word vectors per layer of one monolingual model (Wu 5.1.1)."""

import _bootstrap


def main(smk):
    import torch

    from xling.analysis.contextual import contextual_word_vectors
    from xling.analysis.wordvectors import corpus_sentences, frequent_words, save_word_vectors
    from xling.model import load_pretrained
    from xling.vocab import SubwordTokenizer

    torch.set_num_threads(smk.threads)
    settings, lang = smk.params.settings, smk.wildcards.lang
    model = load_pretrained(smk.input.model)
    tokenizer = SubwordTokenizer.load(f"{smk.input.model}/tokenizer")
    sentences, seed = settings["contextual_sentences"], smk.params.seed
    # Only the words kept for retrieval are averaged (memory: words x layers x dim).
    vocabulary = frequent_words(smk.input.corpus, sentences, settings["vocabulary"], seed)
    drawn = corpus_sentences(smk.input.corpus, sentences, seed)
    words, layers = contextual_word_vectors(model, tokenizer, drawn, lang, words=vocabulary)
    save_word_vectors(smk.output[0], words, layers)
    print(f"{len(words)} words, {len(layers)} layers, from {sentences} sentences at most")


_bootstrap.run(main, snakemake)
