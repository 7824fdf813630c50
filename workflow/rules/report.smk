# Stage 7, report: Table 1 in the paper's layout and the figures.


rule table1:
    input:
        selected_scores(),
    output:
        csv=f"{R}/tables/table1.csv",
        md=f"{R}/tables/table1.md",
    log:
        f"{R}/logs/report/table1.log",
    conda:
        "../../envs/report.yaml"
    params:
        # what each input file holds, in input order: the scripts never parse paths
        cells=table1_cells(),
        pairs=PAIRS,
        variants=config["variants"],
        tasks=TASKS,
        schemes=config["vocab"]["schemes"],
        study=config["study"],
    script:
        "../scripts/table1.py"


rule figure_cka:
    input:
        cka_tables(),
    output:
        f"{R}/figures/cka_layers.png",
    log:
        f"{R}/logs/report/figure_cka.log",
    conda:
        "../../envs/report.yaml"
    params:
        models=cka_models(),
        study=config["study"],
    script:
        "../scripts/figure_cka.py"


rule anchors:
    # The measured "Anchors Pts" column of Table 1: shared vocabulary types per pair and scheme.
    input:
        needed_vocabularies(),
    output:
        f"{R}/tables/anchors.csv",
    log:
        f"{R}/logs/report/anchors.log",
    conda:
        "../../envs/text.yaml"
    script:
        "../scripts/anchors.py"
