# Stage 3, vocab: BPE vocabularies of every configured scheme and the binarized corpora
# (docs/contracts.md, section 3).


rule build_vocab:
    input:
        unpack(get_vocab_inputs),
    output:
        directory(vocab_dir()),
    log:
        f"{R}/logs/vocab/{{pair}}_{{domains}}_{{scheme}}.log",
    conda:
        "../../envs/text.yaml"
    threads: 2
    params:
        languages=get_pair_languages,
        scheme="{scheme}",
        labels=get_vocab_labels,
        scheme_settings=get_scheme_settings,
        backend=config["vocab"]["backend"],
        bpe_sentences_per_language=config["vocab"]["bpe_sentences_per_language"],
        pipelines=get_pair_pipelines,
        seed=config["seed"],
    script:
        "../scripts/build_vocab.py"


rule build_monolingual_vocab:
    # Wu section 5: one BPE per language for its monolingual model (one language, joint BPE).
    input:
        unpack(get_monolingual_corpora),
    output:
        directory(monolingual_vocab_dir()),
    log:
        f"{R}/logs/vocab/mono_{{lang}}.log",
    conda:
        "../../envs/text.yaml"
    threads: 2
    params:
        languages=get_single_language,
        scheme="joint",
        labels=get_monolingual_vocab_labels,
        scheme_settings={"merges": config["monolingual"]["merges"]} if S5 else {},
        backend=config["vocab"]["backend"],
        bpe_sentences_per_language=config["vocab"]["bpe_sentences_per_language"],
        pipelines=get_monolingual_pipeline,
        seed=config["seed"],
    script:
        "../scripts/build_vocab.py"
