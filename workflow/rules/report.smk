# Stage 7, report: the papers' tables (csv, markdown, LaTeX) with the paper beside us, the figures,
# and the check of the papers' claims. Every table and figure is marked for Snakemake's HTML
# report (`snakemake --report results/<study>/report.html`), captioned by workflow/report/*.rst.


rule table1:
    input:
        selected_scores(),
    output:
        csv=report(
            f"{R}/tables/table1.csv",
            caption="../report/table1.rst",
            category=WU_REPORT,
            subcategory="Table 1",
            labels={"artefact": "Table 1", "format": "csv"},
        ),
        md=report(
            f"{R}/tables/table1.md",
            caption="../report/table1.rst",
            category=WU_REPORT,
            subcategory="Table 1",
            labels={"artefact": "Table 1", "format": "markdown"},
        ),
        tex=report(
            f"{R}/tables/table1.tex",
            caption="../report/table1.rst",
            category=WU_REPORT,
            subcategory="Table 1",
            labels={"artefact": "Table 1", "format": "LaTeX"},
        ),
        # Its cells on bootstrap resamples of the test sets, for the claims check.
        resamples=f"{R}/tables/table1_resamples.csv",
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
        resamples=config["report"]["resamples"],
        seed=config["seed"],
    script:
        "../scripts/table1.py"


rule wu_figure3:
    # Wu Figure 3: three columns of Table 1, this run beside the paper.
    input:
        f"{R}/tables/table1.csv",
    output:
        png=report(
            f"{R}/figures/wu_figure3.png",
            caption="../report/wu_figure3.rst",
            category=WU_REPORT,
            subcategory="Table 1",
            labels={"artefact": "Figure 3", "format": "png"},
        ),
        pdf=report(
            f"{R}/figures/wu_figure3.pdf",
            caption="../report/wu_figure3.rst",
            category=WU_REPORT,
            subcategory="Table 1",
            labels={"artefact": "Figure 3", "format": "pdf"},
        ),
        table=report(
            f"{R}/figures/wu_figure3.csv",
            caption="../report/wu_figure3.rst",
            category=WU_REPORT,
            subcategory="Table 1",
            labels={"artefact": "Figure 3", "format": "csv"},
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
        report(
            f"{R}/figures/cka_layers.png",
            caption="../report/cka_layers.rst",
            category=WU_REPORT,
            subcategory="Table 1",
            labels={"artefact": "CKA per layer", "format": "png"},
        ),
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
        csv=report(
            f"{R}/tables/anchors.csv",
            caption="../report/anchors.rst",
            category=WU_REPORT,
            subcategory="Table 1",
            labels={"artefact": "Anchor points", "format": "csv"},
        ),
        md=report(
            f"{R}/tables/anchors.md",
            caption="../report/anchors.rst",
            category=WU_REPORT,
            subcategory="Table 1",
            labels={"artefact": "Anchor points", "format": "markdown"},
        ),
        tex=report(
            f"{R}/tables/anchors.tex",
            caption="../report/anchors.rst",
            category=WU_REPORT,
            subcategory="Table 1",
            labels={"artefact": "Anchor points", "format": "LaTeX"},
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
        md=report(
            f"{R}/report/claims.md",
            caption="../report/claims.rst",
            category=CLAIMS_REPORT,
            labels={"artefact": "Claims", "format": "markdown"},
        ),
        json=report(
            f"{R}/report/claims.json",
            caption="../report/claims.rst",
            category=CLAIMS_REPORT,
            labels={"artefact": "Claims", "format": "json"},
        ),
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
            figure=report(
                f"{R}/figures/wu_figure{{figure}}.png",
                caption="../report/wu_figure.rst",
                category=WU_REPORT,
                subcategory="Section 5",
                labels={"artefact": "Figure {figure}", "format": "png"},
            ),
            pdf=report(
                f"{R}/figures/wu_figure{{figure}}.pdf",
                caption="../report/wu_figure.rst",
                category=WU_REPORT,
                subcategory="Section 5",
                labels={"artefact": "Figure {figure}", "format": "pdf"},
            ),
            table=report(
                f"{R}/figures/wu_figure{{figure}}.csv",
                caption="../report/wu_figure.rst",
                category=WU_REPORT,
                subcategory="Section 5",
                labels={"artefact": "Figure {figure}", "format": "csv"},
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
            [f"{R}/analysis/words/{pair}.csv" for pair in S5.word_pairs],
        output:
            f"{R}/figures/wu_figure4_resamples.csv",
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
            retrieval=[f"{R}/analysis/sentences/{pair}.csv" for pair in S5.pairs],
            similarity=[f"{R}/analysis/similarity/{pair}.csv" for pair in S5.pairs],
            similarity_resamples=[
                f"{R}/analysis/similarity/resamples/{pair}.csv" for pair in S5.similarity_pairs
            ],
        output:
            figure6=f"{R}/figures/wu_figure6_resamples.csv",
            figure7=f"{R}/figures/wu_figure7_resamples.csv",
            correlation=f"{R}/tables/wu_cka_retrieval_resamples.csv",
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
            figure5=f"{R}/figures/wu_figure5_resamples.csv",
            figure8=f"{R}/figures/wu_figure8_resamples.csv",
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
            figure5=report(
                f"{R}/figures/wu_figure5.png",
                caption="../report/wu_figure5.rst",
                category=WU_REPORT,
                subcategory="Section 5",
                labels={"artefact": "Figure 5", "format": "png"},
            ),
            pdf5=report(
                f"{R}/figures/wu_figure5.pdf",
                caption="../report/wu_figure5.rst",
                category=WU_REPORT,
                subcategory="Section 5",
                labels={"artefact": "Figure 5", "format": "pdf"},
            ),
            table5=report(
                f"{R}/figures/wu_figure5.csv",
                caption="../report/wu_figure5.rst",
                category=WU_REPORT,
                subcategory="Section 5",
                labels={"artefact": "Figure 5", "format": "csv"},
            ),
            figure8=report(
                f"{R}/figures/wu_figure8.png",
                caption="../report/wu_figure8.rst",
                category=WU_REPORT,
                subcategory="Section 5",
                labels={"artefact": "Figure 8", "format": "png"},
            ),
            pdf8=report(
                f"{R}/figures/wu_figure8.pdf",
                caption="../report/wu_figure8.rst",
                category=WU_REPORT,
                subcategory="Section 5",
                labels={"artefact": "Figure 8", "format": "pdf"},
            ),
            table8=report(
                f"{R}/figures/wu_figure8.csv",
                caption="../report/wu_figure8.rst",
                category=WU_REPORT,
                subcategory="Section 5",
                labels={"artefact": "Figure 8", "format": "csv"},
            ),
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
            csv=report(
                f"{R}/tables/wu_cka_retrieval_pearson.csv",
                caption="../report/wu_cka_retrieval.rst",
                category=WU_REPORT,
                subcategory="Section 5",
                labels={"artefact": "CKA vs retrieval", "format": "csv"},
            ),
            md=report(
                f"{R}/tables/wu_cka_retrieval_pearson.md",
                caption="../report/wu_cka_retrieval.rst",
                category=WU_REPORT,
                subcategory="Section 5",
                labels={"artefact": "CKA vs retrieval", "format": "markdown"},
            ),
            tex=report(
                f"{R}/tables/wu_cka_retrieval_pearson.tex",
                caption="../report/wu_cka_retrieval.rst",
                category=WU_REPORT,
                subcategory="Section 5",
                labels={"artefact": "CKA vs retrieval", "format": "LaTeX"},
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
