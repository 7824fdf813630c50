# Paths and input functions of stage 7, report (rules: report.smk): Wu et al.'s tables under
# R/tables/, its figures under R/figures/, and the claims check under R/report/.

from xling.report.claims import input_paths as claims_input_paths


def table_file(name="{name}", ext="csv"):
    return f"{R}/tables/{name}.{ext}"


def figure_file(name="{name}", ext="png"):
    return f"{R}/figures/{name}.{ext}"


def claims_file(ext="json"):
    return f"{R}/report/claims.{ext}"


def captioned_formats(path_of, formats, caption, category, artefact, subcategory=None):
    """One output per format (``{ext: path_of(ext)}``), each marked for the HTML report with the
    same caption and artefact."""
    return {
        ext: captioned(path_of(ext), caption, category, artefact, subcategory) for ext in formats
    }


# Wu's section 5 figures drawn from one table per pair (by wu_figure jobs), and each one's tables.
FIGURE_TABLES = {"4": word_table, "6": sentence_table, "7": similarity_table}


def get_figure_pairs(wildcards):
    pairs = {"4": S5.word_pairs, "7": S5.similarity_pairs}
    return pairs.get(wildcards.figure, S5.pairs)


def get_figure_tables(wildcards):
    return [FIGURE_TABLES[wildcards.figure](pair) for pair in get_figure_pairs(wildcards)]


def claims_inputs():
    """Name -> path of what the claims check reads: Table 1, and only the parts of the papers this
    study's config computes (Wu section 5 with `monolingual`, Muller et al. with `muller`)."""
    parts = ["table1"]
    if S5:
        parts.append("section5")
    if MULLER:
        parts.append("muller")
    return claims_input_paths(R, parts)


def section5_figures():
    if not S5:
        return []
    figures = [
        figure_file(f"wu_figure{n}", ext) for n in (4, 5, 6, 7, 8) for ext in ("png", "pdf", "csv")
    ]
    return [*figures, *(table_file("wu_cka_retrieval_pearson", ext) for ext in TABLE_FORMATS)]


def report_targets():
    tables = [table_file(name, ext) for name in ("table1", "anchors") for ext in TABLE_FORMATS]
    return [
        *tables,
        *(figure_file("wu_figure3", ext) for ext in ("png", "pdf", "csv")),
        figure_file("cka_layers", "png"),
        *section5_figures(),
        claims_file("md"),
        claims_file("json"),
    ]
