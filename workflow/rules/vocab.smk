# Stage 3, vocab: BPE vocabularies of every configured scheme and the binarized corpora
# (docs/contracts.md, section 3).


rule build_vocab:
    input:
        unpack(get_vocab_inputs),
    output:
        directory(f"{R}/vocab/{{pair}}/{{domains}}/{{scheme}}"),
    log:
        f"{R}/logs/vocab/{{pair}}_{{domains}}_{{scheme}}.log",
    conda:
        "../../envs/text.yaml"
    threads: 2
    params:
        scheme_settings=get_scheme_settings,
        backend=config["vocab"]["backend"],
        bpe_sentences_per_language=config["vocab"]["bpe_sentences_per_language"],
        pipelines=get_pair_pipelines,
        seed=config["seed"],
    script:
        "../scripts/build_vocab.py"
