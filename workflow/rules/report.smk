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
        table1_vocabularies(),
    output:
        f"{R}/tables/anchors.csv",
    log:
        f"{R}/logs/report/anchors.log",
    conda:
        "../../envs/text.yaml"
    script:
        "../scripts/anchors.py"


if S5:

    rule wu_figure:
        # Wu Figures 4, 6 and 7: one table per pair -> the figure and the numbers behind it.
        input:
            get_figure_tables,
        output:
            figure=f"{R}/figures/wu_figure{{figure}}.png",
            table=f"{R}/figures/wu_figure{{figure}}.csv",
        log:
            f"{R}/logs/report/wu_figure{{figure}}.log",
        wildcard_constraints:
            figure="4|6|7",
        conda:
            "../../envs/report.yaml"
        params:
            pairs=get_figure_pairs,
        script:
            "../scripts/wu_figure.py"

    rule wu_transfer_figures:
        # Wu Figure 5 (monolingual models aligned vs the bilingual model) and Figure 8 (the
        # bilingual model with and without the map), from the same sweeps.
        input:
            transfer_tables(),
        output:
            figure5=f"{R}/figures/wu_figure5.png",
            table5=f"{R}/figures/wu_figure5.csv",
            figure8=f"{R}/figures/wu_figure8.png",
            table8=f"{R}/figures/wu_figure8.csv",
        log:
            f"{R}/logs/report/wu_figure5_8.log",
        conda:
            "../../envs/report.yaml"
        params:
            sweeps=transfer_sweeps(),
        script:
            "../scripts/wu_transfer_figures.py"

    rule wu_cka_retrieval_correlation:
        # Wu 5.2: CKA and sentence retrieval correlate (Pearson over 0.9 for every pair).
        input:
            similarity=[f"{R}/analysis/similarity/{pair}.csv" for pair in S5.pairs],
            retrieval=[f"{R}/analysis/sentences/{pair}.csv" for pair in S5.pairs],
        output:
            f"{R}/tables/wu_cka_retrieval_pearson.csv",
        log:
            f"{R}/logs/report/wu_cka_retrieval_pearson.log",
        conda:
            "../../envs/report.yaml"
        params:
            pairs=S5.pairs,
        script:
            "../scripts/wu_cka_retrieval.py"
