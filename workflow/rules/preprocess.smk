# Stage 2, preprocess: Moses (jieba for Chinese) tokenization, sharded (scatter / gather), then a
# seeded train / valid / test split (docs/contracts.md, section 2).


rule shard_corpus:
    input:
        data_path(layout.corpus("{domain}", "{lang}")),
    output:
        temp([shard_file(shard=shard) for shard in shard_names()]),
    log:
        f"{R}/logs/preprocess/shard_{{domain}}_{{lang}}.log",
    conda:
        "../../envs/text.yaml"
    script:
        "../scripts/shard_corpus.py"


rule tokenize_shard:
    input:
        shard_file(),
        user_dictionary=get_user_dictionary,
    output:
        temp(shard_file(stage="tok")),
    log:
        f"{R}/logs/preprocess/tokenize_{{domain}}_{{lang}}_{{shard}}.log",
    conda:
        "../../envs/text.yaml"
    params:
        pipeline=get_text_pipeline,
    script:
        "../scripts/tokenize.py"


rule split_corpus:
    input:
        [shard_file(shard=shard, stage="tok") for shard in shard_names()],
    output:
        **{split: corpus_split(split=split) for split in CORPUS_SPLITS},
    log:
        f"{R}/logs/preprocess/split_{{domain}}_{{lang}}.log",
    conda:
        "../../envs/text.yaml"
    params:
        valid_sentences=config["preprocess"]["valid_sentences"],
        test_sentences=config["preprocess"]["test_sentences"],
        seed=config["seed"],
    script:
        "../scripts/split_corpus.py"


rule tokenize_parallel:
    input:
        data_path(layout.parallel("{lang}")),
        user_dictionary=get_user_dictionary,
    output:
        tokenized_parallel(),
    log:
        f"{R}/logs/preprocess/tokenize_parallel_{{lang}}.log",
    conda:
        "../../envs/text.yaml"
    params:
        pipeline=get_text_pipeline,
    script:
        "../scripts/tokenize.py"


rule tokenize_tatoeba:
    # Wu section 5.1.3: the Tatoeba sentences, tokenized like everything else.
    input:
        data_path(layout.tatoeba("en", "{tgt}", "{lang}")),
        user_dictionary=get_user_dictionary,
    output:
        tokenized_tatoeba(),
    log:
        f"{R}/logs/preprocess/tokenize_tatoeba_en-{{tgt}}_{{lang}}.log",
    conda:
        "../../envs/text.yaml"
    params:
        pipeline=get_text_pipeline,
    script:
        "../scripts/tokenize.py"
