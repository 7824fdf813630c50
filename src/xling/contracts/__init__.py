"""The data contracts of docs/contracts.md, section 1: every study input is read and written here.

One module per format, so that the acquisition stage, the toy world and fine-tuning share one
reader and one writer of each:

* :mod:`~xling.contracts.conllu`: CoNLL-U treebanks (UD v2).
* :mod:`~xling.contracts.ner`: WikiAnn-style BIO NER (``{lang}:{word}<TAB>{tag}``).
* :mod:`~xling.contracts.xnli`: XNLI-1.0 dev/test and XNLI-MT-1.0 train tsv files.
* :mod:`~xling.contracts.muse`: MUSE bilingual dictionaries.
* :mod:`~xling.contracts.alignment`: Pharaoh word alignments.
* :mod:`~xling.contracts.words`: gold words, one sentence a line.
* :mod:`~xling.contracts.items`: per-item test results of a fine-tuning run (`test_items.json`).
* :mod:`~xling.contracts.layout`: where each of these files lives under ``R/data/``.

Readers read lines with :func:`xling.base.fileio.iter_lines` (UTF-8, ``\\n`` line ends, like every
stage) and stop at the first malformed line with :class:`xling.base.errors.DataFormatError`, which
names the file, the 1-based line and the fix. This package imports none of its modules itself,
so that ``xling.contracts.layout`` stays cheap for the Snakefile.
"""
