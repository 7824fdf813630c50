# Stage 6, analysis: linear CKA per layer between the representations of parallel sentences
# (docs/contracts.md, section 6).


rule cka:
    input:
        unpack(get_cka_inputs),
    output:
        f"{R}/analysis/cka/{{pair}}/{{variant}}.csv",
    log:
        f"{R}/logs/analysis/cka_{{pair}}_{{variant}}.log",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    params:
        languages=get_pair_languages,
        settings=config["analysis"]["cka"],
        seed=config["seed"],
    script:
        "../scripts/cka.py"
