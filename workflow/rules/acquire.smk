# Stage 1, acquire: everything under R/data/ (docs/contracts.md, section 1).
# The demo study generates the toy world; the paper study downloads and converts real data.


if config["data"]["source"] == "toyworld":

    rule toyworld:
        output:
            [data_path(path) for path in toyworld_outputs()],
        log:
            f"{R}/logs/acquire/toyworld.log",
        conda:
            "../../envs/text.yaml"
        params:
            spec=TOYWORLD_SPEC,
            out_dir=get_output_dir,
        script:
            "../scripts/toyworld.py"

else:

    rule download:
        output:
            download_file(),
        log:
            f"{R}/logs/acquire/download_{{resource}}.log",
        retries: 2
        localrule: True
        conda:
            "../../envs/text.yaml"
        params:
            source=get_download_settings,
        script:
            "../scripts/download.py"

    rule unpack:
        input:
            download_file(),
        output:
            directory(unpacked_dir()),
        log:
            f"{R}/logs/acquire/unpack_{{resource}}.log",
        conda:
            "../../envs/text.yaml"
        script:
            "../scripts/unpack.py"

    rule download_wikipedia:
        output:
            wikipedia_dump(),
        log:
            f"{R}/logs/acquire/download_wikipedia_{{lang}}_{{dump}}.log",
        wildcard_constraints:
            dump="[^/]+",
        retries: 2
        localrule: True
        conda:
            "../../envs/text.yaml"
        params:
            source=get_wikipedia_source,
        script:
            "../scripts/download.py"

    rule extract_wikipedia:
        input:
            get_wikipedia_dump,
        output:
            data_path(layout.corpus("wiki", "{lang}")),
        log:
            f"{R}/logs/acquire/extract_wikipedia_{{lang}}.log",
        conda:
            "../../envs/text.yaml"
        threads: 4
        script:
            "../scripts/extract_wikipedia.py"

    rule import_xnli:
        input:
            xnli=unpacked_dir(config["data"]["xnli"]),
            xnli_mt=unpacked_dir(config["data"]["xnli_mt"]),
        output:
            dev=data_path(layout.xnli("dev")),
            test=data_path(layout.xnli("test")),
            train=data_path(layout.xnli_train()),
        log:
            f"{R}/logs/acquire/import_xnli.log",
        conda:
            "../../envs/text.yaml"
        script:
            "../scripts/import_xnli.py"

    rule xnli_parallel:
        input:
            dev=data_path(layout.xnli("dev")),
            test=data_path(layout.xnli("test")),
        output:
            [data_path(layout.parallel(lang)) for lang in PARALLEL_LANGUAGES],
        log:
            f"{R}/logs/acquire/xnli_parallel.log",
        conda:
            "../../envs/text.yaml"
        params:
            languages=PARALLEL_LANGUAGES,
        script:
            "../scripts/xnli_parallel.py"

    rule import_ner:
        # Not downloadable (licence or no stable address): the user puts the files under
        # data.manual_dir; the plan and the job say exactly where when they are missing.
        input:
            get_manual_ner_files,
            user_dictionary=get_user_dictionary,
        output:
            **{
                split: data_path(layout.ner("{dataset}", "{lang}", split))
                for split in layout.TASK_SPLITS
            },
        log:
            f"{R}/logs/acquire/import_ner_{{dataset}}_{{lang}}.log",
        conda:
            "../../envs/text.yaml"
        params:
            manual_dir=config["data"]["manual_dir"],
            pipeline=get_text_pipeline,
        script:
            "../scripts/import_ner.py"

    rule download_commoncrawl:
        output:
            commoncrawl_file(),
        log:
            f"{R}/logs/acquire/download_commoncrawl_{{lang}}.log",
        retries: 2
        localrule: True
        conda:
            "../../envs/text.yaml"
        params:
            source=get_commoncrawl_source,
        script:
            "../scripts/download.py"

    rule sample_commoncrawl:
        # Wu §4.1: a random subset of Common Crawl of the same size as the language's Wikipedia.
        input:
            commoncrawl=commoncrawl_file(),
            wikipedia=data_path(layout.corpus("wiki", "{lang}")),
        output:
            data_path(layout.corpus("cc", "{lang}")),
        log:
            f"{R}/logs/acquire/sample_commoncrawl_{{lang}}.log",
        conda:
            "../../envs/text.yaml"
        params:
            seed=config["seed"],
        script:
            "../scripts/sample_commoncrawl.py"

    rule download_muse:
        # MUSE dictionaries are already in the contract's format: download straight into R/data.
        output:
            data_path(layout.muse("{src}", "{tgt}", "{split}")),
        log:
            f"{R}/logs/acquire/download_muse_{{src}}-{{tgt}}_{{split}}.log",
        retries: 2
        localrule: True
        conda:
            "../../envs/text.yaml"
        params:
            source=get_muse_source,
        script:
            "../scripts/download.py"

    # UD datasets (config data.ud): a treebank of a downloaded release, or files put by hand
    # under data.manual_dir. One rule per set of splits, each declaring only the files its
    # datasets have: import_ud (train, dev, test), import_ud_test (PUD, LexNorm).
    for _splits, _datasets in ud_import_groups().items():

        rule:
            name:
                ud_import_rule(_splits)
            input:
                release=get_ud_release,
                hand=lambda wildcards, splits=_splits: get_manual_ud_files(wildcards, splits),
            output:
                **{split: data_path(layout.ud("{dataset}", "{lang}", split)) for split in _splits},
            log:
                f"{R}/logs/acquire/import_ud_{{dataset}}_{{lang}}.log",
            wildcard_constraints:
                dataset=_alternatives(_datasets),
            conda:
                TORCH_ENV
            params:
                source=get_ud_source,
            script:
                "../scripts/import_ud.py"

    rule download_tatoeba:
        # Wu 5.1.3: LASER's Tatoeba test files are already one sentence a line, line-aligned.
        output:
            data_path(layout.tatoeba("en", "{tgt}", "{lang}")),
        log:
            f"{R}/logs/acquire/download_tatoeba_en-{{tgt}}_{{lang}}.log",
        retries: 2
        localrule: True
        conda:
            "../../envs/text.yaml"
        params:
            source=get_tatoeba_source,
        script:
            "../scripts/download.py"

    rule download_fasttext:
        output:
            fasttext_download(),
        log:
            f"{R}/logs/acquire/download_fasttext_{{lang}}.log",
        retries: 2
        localrule: True
        conda:
            "../../envs/text.yaml"
        params:
            source=get_fasttext_source,
        script:
            "../scripts/download.py"

    rule import_paraphrases:
        # en' (Wu 5.2): English paraphrases of the parallel sentences, by back-translation; no
        # public file exists, so they are provided by hand, line-aligned with the English side.
        input:
            get_manual_paraphrases,
            english=data_path(layout.parallel("en")),
        output:
            data_path(layout.parallel("{lang}")),
        log:
            f"{R}/logs/acquire/import_paraphrases_{{lang}}.log",
        wildcard_constraints:
            lang=_alternatives([S5.english_prime] if S5 else []),
        conda:
            "../../envs/text.yaml"
        params:
            manual_dir=config["data"]["manual_dir"],
        script:
            "../scripts/import_paraphrases.py"


if "transformers" in config["data"]:

    rule download_transformers_file:
        # One file of a transformers model named by a hub id (Muller et al.'s mBERT), fetched on
        # the machine that runs Snakemake: its jobs then load a directory, never the Hub.
        output:
            f"{transformers_dir()}/{{file}}",
        log:
            f"{R}/logs/acquire/download_transformers_{{model}}_{{file}}.log",
        wildcard_constraints:
            model=".+",
            file="[^/]+",
        retries: 2
        localrule: True
        conda:
            "../../envs/text.yaml"
        params:
            source=get_transformers_source,
        script:
            "../scripts/download.py"
