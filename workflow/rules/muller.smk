# Stage 8, Muller et al. (2021): a multilingual model fine-tuned with and without RANDOM-INIT of
# layer groups, and the cross-lingual similarity of its pretrained and fine-tuned states
# (docs/muller.md). Data are encoded once per (experiment, task, source) and shared by its runs.

if MULLER:

    wildcard_constraints:
        experiment="transfer|domain",
        mtask="parsing|pos|ner",
        msource=_alternatives(config["muller"]["languages"]),
        job=r"all|[a-z0-9-]+/s\d+/[A-Za-z0-9_.+-]+",

    if config["muller"]["model"]["source"] == "pretrain":

        rule build_multilingual_vocab:
            # One joint BPE over every language of the study, as mBERT's one WordPiece vocabulary.
            input:
                unpack(get_multilingual_corpora),
            output:
                directory(multilingual_vocab_dir()),
            log:
                f"{R}/logs/vocab/multi.log",
            conda:
                "../../envs/text.yaml"
            threads: 2
            params:
                languages=config["muller"]["languages"],
                scheme="joint",
                labels={"pair": "multi", "domains": "wiki"},
                scheme_settings={"merges": config["muller"]["model"]["merges"]},
                backend=config["vocab"]["backend"],
                bpe_sentences_per_language=config["vocab"]["bpe_sentences_per_language"],
                pipelines=muller_pipelines(),
                seed=config["seed"],
            script:
                "../scripts/build_vocab.py"

        rule pretrain_multilingual:
            input:
                multilingual_vocab_dir(),
            output:
                **pretrain_outputs(multilingual_model_folder(), pretrain_curve_figure("multi")),
            log:
                f"{R}/logs/pretrain/multi.log",
            retries: PRETRAIN_RETRIES
            conda:
                TORCH_ENV
            threads: config["pretrain"]["threads"]
            resources:
                runtime=get_pretrain_runtime,
            params:
                languages=config["muller"]["languages"],
                model=muller_multilingual_settings(),
                pretrain=get_multilingual_pretrain_params,
                seed=config["seed"],
                work_dir=f"{multilingual_model_folder()}/.work",
                title="multilingual (Muller et al.)",
            script:
                "../scripts/pretrain.py"

    rule muller_encode:
        # Read, check and encode a setup's files once; every run of the setup loads the result.
        input:
            unpack(get_muller_setup_files),
        output:
            muller_encoded(),
        log:
            f"{R}/logs/muller/encode_{{experiment}}_{{mtask}}_{{msource}}.log",
        conda:
            TORCH_ENV
        params:
            model=get_muller_model,
            setup=get_muller_setup,
            settings=get_muller_settings,
        script:
            "../scripts/muller_encode.py"

    rule muller_parallel:
        # The parallel sentences of the similarity analysis, as subword ids per language.
        input:
            unpack(get_muller_parallel_files),
        output:
            muller_parallel(),
        log:
            f"{R}/logs/muller/parallel.log",
        conda:
            TORCH_ENV
        params:
            model=get_muller_model,
            languages=similarity_languages(config["muller"]),
            sentences=config["muller"]["similarity"]["sentences"],
        script:
            "../scripts/muller_parallel.py"

    rule muller_finetune:
        # One run (a group, a seed, a grid point), or every run of a setup in one process.
        input:
            unpack(get_muller_job_inputs),
        output:
            muller_job_file(),
        log:
            f"{R}/logs/muller/finetune/{{experiment}}_{{mtask}}_{{msource}}_{{job}}.log",
        conda:
            TORCH_ENV
        threads: 1
        params:
            model=get_muller_model,
            setup=get_muller_setup,
            settings=get_muller_settings,
            runs=get_muller_runs,
            debiased=config["muller"]["similarity"]["debiased"],
            # similarity runs also measure it on bootstrap resamples of the parallel sentences
            resamples={"count": config["report"]["resamples"], "seed": config["seed"]},
            # how the similarity is measured: the paper's reading, or the released code's
            measure={
                key: config["muller"]["similarity"][key]
                for key in ("measure", "windows", "pooling")
            },
            random_init_scheme=config["muller"]["random_init_scheme"],
        script:
            "../scripts/muller_finetune.py"

    rule muller_similarity_pretrained:
        # Its CKA per layer, and on bootstrap resamples of the parallel sentences, with the length
        # control (the same for every model). One thread, as the other analysis jobs: a two-thread
        # job waits until both cores are free at once, which in the demo came only at its end,
        # where it held back Table 1 and the claims.
        input:
            unpack(get_muller_model_inputs),
            parallel=muller_parallel(),
        output:
            table=muller_pretrained_similarity(),
            resamples=muller_pretrained_similarity("pretrained_resamples"),
        log:
            f"{R}/logs/muller/similarity_pretrained.log",
        conda:
            TORCH_ENV
        threads: 1
        params:
            model=get_muller_model,
            sources=config["muller"]["similarity"]["sources"],
            debiased=config["muller"]["similarity"]["debiased"],
            measure={
                key: config["muller"]["similarity"][key]
                for key in ("measure", "windows", "pooling")
            },
            resamples=config["report"]["resamples"],
            seed=config["seed"],
        script:
            "../scripts/muller_similarity.py"

    rule muller_collect:
        # The selected grid point of every (setup, group, seed) -> scores.csv, similarity.csv.
        input:
            jobs=muller_job_files,
            pretrained=muller_pretrained_similarity(),
        output:
            scores=muller_file("scores.csv"),
            similarity=muller_file("similarity.csv"),
        log:
            f"{R}/logs/muller/collect.log",
        conda:
            TORCH_ENV
        params:
            runs=muller_runs_table,
            evaluations=muller_evaluations,
        script:
            "../scripts/muller_collect.py"

    rule muller_resamples:
        # scores.csv on bootstrap resamples of the test sets and similarity.csv on those of the
        # parallel sentences, for the claims check.
        input:
            jobs=muller_job_files,
            pretrained=muller_pretrained_similarity("pretrained_resamples"),
        output:
            scores=muller_file("scores_resamples.csv"),
            similarity=muller_file("similarity_resamples.csv"),
        log:
            f"{R}/logs/muller/resamples.log",
        conda:
            "../../envs/report.yaml"
        params:
            runs=muller_runs_table,
            evaluations=muller_evaluations,
            resamples=config["report"]["resamples"],
            seed=config["seed"],
        script:
            "../scripts/muller_resamples.py"

    rule muller_tables:
        # Muller Tables 1, 2, 4, 5 and 6-8, ours beside the paper's (csv, markdown, LaTeX).
        input:
            scores=muller_file("scores.csv"),
            similarity=muller_file("similarity.csv"),
        output:
            **{
                f"{table}_{ext}": muller_report_output(table, ext)
                for table in MULLER_TABLES
                for ext in TABLE_FORMATS
            },
        log:
            f"{R}/logs/muller/tables.log",
        conda:
            "../../envs/report.yaml"
        params:
            study=config["study"],
            sources=config["muller"]["sources"],
            languages=config["muller"]["languages"],
        script:
            "../scripts/muller_tables.py"

    rule muller_figures:
        # Muller Figures 1-8 (png, pdf, and the numbers behind each as csv).
        input:
            scores=muller_file("scores.csv"),
            similarity=muller_file("similarity.csv"),
        output:
            **{
                f"{figure}_{ext}": muller_report_output(figure, ext)
                for figure in MULLER_FIGURES
                for ext in ("png", "pdf")
            },
            **{f"{figure}_csv": muller_artefact(figure, "csv") for figure in MULLER_FIGURES},
        log:
            f"{R}/logs/muller/figures.log",
        conda:
            "../../envs/report.yaml"
        params:
            figure2_group=config["muller"]["similarity"]["random_init_group"],
            languages=config["muller"]["languages"],
            source=config["muller"]["similarity"]["sources"][0],
        script:
            "../scripts/muller_figures.py"
