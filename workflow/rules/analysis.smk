# Stage 6, analysis: linear CKA per layer between the representations of parallel sentences
# (docs/contracts.md, section 6).


rule cka:
    input:
        unpack(get_cka_inputs),
    output:
        cka_table(),
    log:
        f"{R}/logs/analysis/cka_{{pair}}_{{variant}}.log",
    conda:
        TORCH_ENV
    threads: 1
    params:
        languages=get_pair_languages,
        settings=config["analysis"]["cka"],
        seed=config["seed"],
    script:
        "../scripts/cka.py"


# Wu section 5: monolingual models aligned post hoc (Figures 4 to 8). Present when the config
# has a `monolingual` section.
if S5 and config["data"]["source"] == "toyworld":

    rule train_fasttext:
        # The demo trains the fastText baseline of Wu 5.1.1 on the monolingual model's own text.
        input:
            corpus_split("wiki", split="train"),
        output:
            fasttext_vectors(),
        log:
            f"{R}/logs/analysis/train_fasttext_{{lang}}.log",
        conda:
            "../../envs/text.yaml"
        threads: 1
        params:
            settings=WORD_SETTINGS,
            seed=config["seed"],
        script:
            "../scripts/train_fasttext.py"

elif S5:

    rule keep_fasttext_vocabulary:
        # Wu 5.1.1: "we use the first 200k embeddings of fastText" (the published wiki vectors).
        input:
            fasttext_download(),
        output:
            fasttext_vectors(),
        log:
            f"{R}/logs/analysis/keep_fasttext_{{lang}}.log",
        conda:
            "../../envs/text.yaml"
        params:
            vocabulary=config["analysis"]["word_alignment"]["vocabulary"],
        script:
            "../scripts/keep_fasttext_vocabulary.py"


if S5:

    rule contextual_word_vectors:
        # Wu 5.1.1: each word the average of its subword vectors, averaged over its occurrences.
        input:
            model=get_monolingual_model_of_lang,
            corpus=corpus_split("wiki", split="train"),
        output:
            contextual_vectors(),
        log:
            f"{R}/logs/analysis/contextual_words_{{lang}}.log",
        conda:
            TORCH_ENV
        threads: 1
        params:
            settings=WORD_SETTINGS,
            seed=config["seed"],  # which sentences are drawn
        script:
            "../scripts/contextual_words.py"

    rule word_alignment:
        # Wu 5.1.1, Figure 4: Procrustes on the MUSE train dictionary, CSLS on the test one.
        input:
            unpack(get_word_alignment_inputs),
        output:
            word_table(),
        log:
            f"{R}/logs/analysis/word_alignment_en-{{tgt}}.log",
        conda:
            TORCH_ENV
        threads: 1
        params:
            languages=get_section5_languages,
            settings=WORD_SETTINGS,
        script:
            "../scripts/word_alignment.py"

    rule contextual_mappings:
        # Wu 5.1.2: per layer, Procrustes from the target model's layer to the source model's.
        input:
            unpack(get_mapping_inputs),
        output:
            mapping_file(),
        log:
            f"{R}/logs/analysis/mappings_{{kind}}_en-{{tgt}}.log",
        conda:
            TORCH_ENV
        threads: 1
        params:
            languages=get_section5_languages,
            sentences=config["analysis"]["parallel_sentences"],
        script:
            "../scripts/contextual_mappings.py"

    rule contextual_transfer:
        # Wu 5.1.2, Figures 5 and 8: task layers over the frozen first i layers, i = 0..L, of
        # the English monolingual model (kind mono) or of the pair's bilingual model.
        input:
            unpack(get_transfer_inputs),
        output:
            transfer_table(),
        log:
            f"{R}/logs/analysis/transfer_{{kind}}_{{pair}}_{{task}}.log",
        conda:
            TORCH_ENV
        threads: 1
        params:
            evaluations=get_transfer_evaluations,
            settings=get_transfer_settings,
            work_dir=transfer_work_dir(),
        script:
            "../scripts/contextual_transfer.py"

    rule sentence_retrieval:
        # Wu 5.1.3, Figure 6: mean-pooled sentences per layer, Procrustes on the parallel
        # sentences, nearest neighbour on Tatoeba.
        input:
            unpack(get_sentence_retrieval_inputs),
        output:
            sentence_table(),
        log:
            f"{R}/logs/analysis/sentence_retrieval_en-{{tgt}}.log",
        conda:
            TORCH_ENV
        threads: 1
        params:
            languages=get_section5_languages,
            sentences=config["analysis"]["parallel_sentences"],
            normalize_rounds=config["analysis"]["word_alignment"]["normalize_rounds"],
            seed=config["seed"],  # Figure 7's random encoder, the retrieval's baseline
        script:
            "../scripts/sentence_retrieval.py"

    rule similarity:
        # Wu 5.2, Figure 7: CKA per layer of monolingual, bilingual and random encoders, and
        # on bootstrap resamples of the parallel sentences (for the claims check).
        input:
            unpack(get_similarity_inputs),
        output:
            table=similarity_table(),
            resamples=similarity_resamples(),
        log:
            f"{R}/logs/analysis/similarity_en-{{tgt}}.log",
        conda:
            TORCH_ENV
        threads: 1
        params:
            languages=get_section5_languages,
            target_model_language=get_target_model_language,
            settings=config["analysis"]["cka"],
            seed=config["seed"],
            resamples=config["report"]["resamples"],
        script:
            "../scripts/similarity.py"


if S5 and not GOLD_ALIGNMENTS:

    rule align_parallel:
        # Wu 5.1.2: word alignments of the parallel sentences (eflomal; docs/alignment.md).
        input:
            source=tokenized_parallel("en"),
            target=tokenized_parallel("{tgt}"),
        output:
            alignment_file(),
        log:
            f"{R}/logs/analysis/align_parallel_en-{{tgt}}.log",
        conda:
            "../../envs/text.yaml"
        params:
            sentences=config["analysis"]["parallel_sentences"],
        script:
            "../scripts/align_parallel.py"
