# Stage 3, vocab: BPE vocabularies of every configured scheme and the binarized corpora
# (docs/contracts.md, section 3).


rule build_vocab:
    input:
        unpack(vocab_inputs),
    output:
        directory(f"{R}/vocab/{{pair}}/{{domains}}/{{scheme}}"),
    log:
        f"{R}/logs/vocab/{{pair}}_{{domains}}_{{scheme}}.log",
    conda:
        f"{ENVS}/text.yaml"
    threads: 2
    params:
        scheme_settings=lambda wc: config["vocab"]["schemes"][wc.scheme],
        backend=config["vocab"]["backend"],
        bpe_sentences_per_language=config["vocab"]["bpe_sentences_per_language"],
        pipelines=lambda wc: {
            lang: text_pipeline_settings(lang) for lang in pair_languages(wc.pair)
        },
        seed=config["seed"],
    script:
        "../scripts/build_vocab.py"
