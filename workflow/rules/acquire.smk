# Stage 1, acquire: everything under R/data/ (docs/contracts.md, section 1).
# The demo study generates the toy world; the paper study downloads and converts real data.


if config["data"]["source"] == "toyworld":

    rule toyworld:
        output:
            [f"{R}/data/{path}" for path in toyworld_outputs()],
        log:
            f"{R}/logs/acquire/toyworld.log",
        conda:
            f"{ENVS}/text.yaml"
        params:
            spec=TOYWORLD_SPEC,
            out_dir=common_output_dir,
        script:
            "../scripts/toyworld.py"

else:

    rule download:
        output:
            f"{R}/raw/downloads/{{resource}}",
        log:
            f"{R}/logs/acquire/download_{{resource}}.log",
        retries: 2
        localrule: True
        conda:
            f"{ENVS}/text.yaml"
        params:
            source=lambda wc: download_settings(wc.resource),
        script:
            "../scripts/download.py"

    rule unpack:
        input:
            f"{R}/raw/downloads/{{resource}}",
        output:
            directory(f"{R}/raw/unpacked/{{resource}}"),
        log:
            f"{R}/logs/acquire/unpack_{{resource}}.log",
        conda:
            f"{ENVS}/text.yaml"
        script:
            "../scripts/unpack.py"

    rule extract_wikipedia:
        input:
            lambda wc: f"{R}/raw/downloads/{config['data']['wikipedia'][wc.lang]}",
        output:
            f"{R}/data/corpus/wiki/{{lang}}.txt",
        log:
            f"{R}/logs/acquire/extract_wikipedia_{{lang}}.log",
        conda:
            f"{ENVS}/text.yaml"
        threads: 4
        script:
            "../scripts/extract_wikipedia.py"

    rule import_xnli:
        input:
            xnli=f"{R}/raw/unpacked/{config['data']['xnli']}",
            xnli_mt=f"{R}/raw/unpacked/{config['data']['xnli_mt']}",
        output:
            dev=f"{R}/data/xnli/xnli.dev.tsv",
            test=f"{R}/data/xnli/xnli.test.tsv",
            train=f"{R}/data/xnli/multinli.train.en.tsv",
        log:
            f"{R}/logs/acquire/import_xnli.log",
        conda:
            f"{ENVS}/text.yaml"
        script:
            "../scripts/import_xnli.py"

    rule xnli_parallel:
        input:
            dev=f"{R}/data/xnli/xnli.dev.tsv",
            test=f"{R}/data/xnli/xnli.test.tsv",
        output:
            [f"{R}/data/parallel/{lang}.txt" for lang in PARALLEL_LANGUAGES],
        log:
            f"{R}/logs/acquire/xnli_parallel.log",
        conda:
            f"{ENVS}/text.yaml"
        params:
            languages=PARALLEL_LANGUAGES,
        script:
            "../scripts/xnli_parallel.py"

    rule import_ner:
        # Not downloadable (licence or no stable address): the user puts the files under
        # data.manual_dir; the job says exactly where when they are missing.
        output:
            [f"{R}/data/ner/{{dataset}}/{{lang}}/{split}.txt" for split in ("train", "dev", "test")],
        log:
            f"{R}/logs/acquire/import_ner_{{dataset}}_{{lang}}.log",
        conda:
            f"{ENVS}/text.yaml"
        params:
            manual_dir=config["data"]["manual_dir"],
            segmenter=lambda wc: config["languages"][wc.lang]["segmenter"],
        script:
            "../scripts/import_ner.py"
