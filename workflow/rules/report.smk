# Stage 7, report: the papers' tables (csv, markdown, LaTeX) with the paper beside us, the figures,
# and the check of the papers' claims. Every table and figure is marked for Snakemake's HTML
# report (`snakemake --report results/<study>/report.html`), captioned by workflow/report/*.rst.


rule table1:
    input:
        selected_scores(),
    output:
        **captioned_formats(
            lambda ext: table_file("table1", ext),
            TABLE_FORMATS,
            "table1",
            WU_REPORT,
            "Table 1",
            "Table 1",
        ),
        # Its cells on bootstrap resamples of the test sets, for the claims check.
        resamples=table_file("table1_resamples"),
    log:
        f"{R}/logs/report/table1.log",
    conda:
        "../../envs/report.yaml"
    params:
        # what each input file holds, in input order: the scripts never parse paths
        cells=T1.cells(),
        pairs=PAIRS,
        variants=config["variants"],
        tasks=TASKS,
        schemes=config["vocab"]["schemes"],
        study=config["study"],
        resamples=config["report"]["resamples"],
        seed=config["seed"],
    script:
        "../scripts/table1.py"


rule wu_figure3:
    # Wu Figure 3: three columns of Table 1, this run beside the paper.
    input:
        table_file("table1"),
    output:
        **captioned_formats(
            lambda ext: figure_file("wu_figure3", ext),
            ("png", "pdf", "csv"),
            "wu_figure3",
            WU_REPORT,
            "Figure 3",
            "Table 1",
        ),
    log:
        f"{R}/logs/report/wu_figure3.log",
    conda:
        "../../envs/report.yaml"
    script:
        "../scripts/wu_figure3.py"


rule figure_cka:
    input:
        cka_tables(),
    output:
        captioned(figure_file("cka_layers"), "cka_layers", WU_REPORT, "CKA per layer", "Table 1"),
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
        **captioned_formats(
            lambda ext: table_file("anchors", ext),
            TABLE_FORMATS,
            "anchors",
            WU_REPORT,
            "Anchor points",
            "Table 1",
        ),
    log:
        f"{R}/logs/report/anchors.log",
    conda:
        "../../envs/text.yaml"
    params:
        study=config["study"],
    script:
        "../scripts/anchors.py"


rule claims:
    # The papers' conclusions checked against this run: only the inputs this study computes
    # (Table 1; Wu section 5 with config `monolingual`; Muller et al. with config `muller`).
    input:
        **claims_inputs(),
    output:
        **captioned_formats(claims_file, ("md", "json"), "claims", CLAIMS_REPORT, "Claims"),
    log:
        f"{R}/logs/report/claims.log",
    conda:
        "../../envs/report.yaml"
    params:
        study=config["study"],
        english_prime=S5.english_prime if S5 else "enp",
        muller_layers=muller_layers(),
    script:
        "../scripts/claims.py"


if S5:

    rule wu_figure:
        # Wu Figures 4, 6 and 7: one table per pair -> the figure (png, pdf) and its numbers.
        input:
            get_figure_tables,
        output:
            **captioned_formats(
                lambda ext: figure_file("wu_figure{figure}", ext),
                ("png", "pdf", "csv"),
                "wu_figure",
                WU_REPORT,
                "Figure {figure}",
                "Section 5",
            ),
        log:
            f"{R}/logs/report/wu_figure{{figure}}.log",
        wildcard_constraints:
            figure="4|6|7",
        conda:
            "../../envs/report.yaml"
        params:
            pairs=get_figure_pairs,
            english_prime=S5.english_prime,
        script:
            "../scripts/wu_figure.py"

    rule wu_figure4_resamples:
        # Figure 4 on bootstrap resamples of each pair's test words, for the claims check.
        input:
            [word_table(pair) for pair in S5.word_pairs],
        output:
            figure_file("wu_figure4_resamples", "csv"),
        log:
            f"{R}/logs/report/wu_figure4_resamples.log",
        conda:
            "../../envs/report.yaml"
        params:
            pairs=S5.word_pairs,
            resamples=config["report"]["resamples"],
            seed=config["seed"],
        script:
            "../scripts/wu_figure4_resamples.py"

    rule wu_sentence_resamples:
        # Figure 6 on bootstrap resamples of the Tatoeba sentences, Figure 7 on those of the
        # parallel sentences (computed by the similarity jobs) and the CKA-retrieval
        # correlation on both, for the claims check.
        input:
            retrieval=[sentence_table(pair) for pair in S5.pairs],
            similarity=[similarity_table(pair) for pair in S5.pairs],
            similarity_resamples=[similarity_resamples(pair) for pair in S5.similarity_pairs],
        output:
            figure6=figure_file("wu_figure6_resamples", "csv"),
            figure7=figure_file("wu_figure7_resamples", "csv"),
            correlation=table_file("wu_cka_retrieval_resamples"),
        log:
            f"{R}/logs/report/wu_sentence_resamples.log",
        conda:
            "../../envs/report.yaml"
        params:
            pairs=S5.pairs,
            similarity_pairs=S5.similarity_pairs,
            resamples=config["report"]["resamples"],
            seed=config["seed"],
        script:
            "../scripts/wu_sentence_resamples.py"

    rule wu_transfer_resamples:
        # Figures 5 and 8 on bootstrap resamples of the NER and parsing test sets, for the
        # claims check.
        input:
            transfer_tables(),
        output:
            figure5=figure_file("wu_figure5_resamples", "csv"),
            figure8=figure_file("wu_figure8_resamples", "csv"),
        log:
            f"{R}/logs/report/wu_transfer_resamples.log",
        conda:
            "../../envs/report.yaml"
        params:
            sweeps=transfer_sweeps(),
            resamples=config["report"]["resamples"],
            seed=config["seed"],
        script:
            "../scripts/wu_transfer_resamples.py"

    rule wu_transfer_figures:
        # Wu Figure 5 (monolingual models aligned vs the bilingual model) and Figure 8 (the
        # bilingual model with and without the map), from the same sweeps.
        input:
            transfer_tables(),
        output:
            **{
                f"{key}{n}": output
                for n in (5, 8)
                for key, output in captioned_formats(
                    lambda ext, n=n: figure_file(f"wu_figure{n}", ext),
                    ("png", "pdf", "csv"),
                    f"wu_figure{n}",
                    WU_REPORT,
                    f"Figure {n}",
                    "Section 5",
                ).items()
            },
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
            similarity=[similarity_table(pair) for pair in S5.pairs],
            retrieval=[sentence_table(pair) for pair in S5.pairs],
        output:
            **captioned_formats(
                lambda ext: table_file("wu_cka_retrieval_pearson", ext),
                TABLE_FORMATS,
                "wu_cka_retrieval",
                WU_REPORT,
                "CKA vs retrieval",
                "Section 5",
            ),
        log:
            f"{R}/logs/report/wu_cka_retrieval_pearson.log",
        conda:
            "../../envs/report.yaml"
        params:
            pairs=S5.pairs,
            study=config["study"],
        script:
            "../scripts/wu_cka_retrieval.py"
