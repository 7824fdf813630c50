# Stage 6, analysis: linear CKA per layer between the representations of parallel sentences
# (docs/contracts.md, section 6).


rule cka:
    input:
        model=lambda wc: model_dir(wc.pair, wc.variant),
        source=lambda wc: f"{R}/preprocess/parallel/{pair_languages(wc.pair)[0]}.txt",
        target=lambda wc: f"{R}/preprocess/parallel/{pair_languages(wc.pair)[1]}.txt",
    output:
        f"{R}/analysis/cka/{{pair}}/{{variant}}.csv",
    log:
        f"{R}/logs/analysis/cka_{{pair}}_{{variant}}.log",
    conda:
        f"{ENVS}/torch.yaml"
    threads: 1
    params:
        languages=lambda wc: list(pair_languages(wc.pair)),
        settings=config["analysis"]["cka"],
        seed=config["seed"],
    script:
        "../scripts/cka.py"
