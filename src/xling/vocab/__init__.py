"""Vocabulary: BPE (learn, apply, codes), the four schemes of Table 1, binarized corpora, anchors.

Public API:

* :func:`build_vocabulary`, :data:`SCHEMES`, :class:`VocabSettings`: one scheme's tokenizer
  directory, ``.npy`` corpora and ``stats.json`` for the languages of a pair, with the settings
  of the config's ``vocab`` section.
* :class:`SubwordTokenizer`: load/save a tokenizer directory; encode words, raw or tokenized
  lines; language token ids; decode.
* :func:`learn_bpe`, :func:`make_bpe_applier`, :class:`TokenizersBpe`, :class:`SubwordNmtBpe`,
  :data:`BPE_BACKENDS`, :func:`read_codes`, :func:`write_codes`: BPE with HF ``tokenizers``
  (output identical to subword-nmt's ``apply_bpe``) or subword-nmt.
* :class:`CodeSwitchSettings`, :class:`BilingualDictionary`, :func:`codeswitch_file`: extra
  anchors.
* :func:`write_anchor_table`, :func:`anchor_table_rows`: ``anchors.csv`` from ``stats.json`` files.
* :func:`binarize_file`: a tokenized corpus -> ``.npy`` with an existing tokenizer.
"""

from xling.vocab.anchors import ANCHOR_COLUMNS, anchor_table_rows, write_anchor_table
from xling.vocab.bpe import (
    BPE_BACKENDS,
    BpeApplier,
    SubwordNmtBpe,
    TokenizersBpe,
    learn_bpe,
    make_bpe_applier,
)
from xling.vocab.codes import read_codes, write_codes
from xling.vocab.codeswitch import (
    BilingualDictionary,
    CodeSwitchSettings,
    CodeSwitchStats,
    codeswitch_file,
)
from xling.vocab.schemes import binarize_file, build_vocabulary
from xling.vocab.settings import SCHEMES, VocabSettings
from xling.vocab.tokenizer import SPECIAL_TOKENS, LanguageSetup, SubwordTokenizer

__all__ = [
    "ANCHOR_COLUMNS",
    "BPE_BACKENDS",
    "SCHEMES",
    "SPECIAL_TOKENS",
    "BilingualDictionary",
    "BpeApplier",
    "CodeSwitchSettings",
    "CodeSwitchStats",
    "LanguageSetup",
    "SubwordNmtBpe",
    "SubwordTokenizer",
    "TokenizersBpe",
    "VocabSettings",
    "anchor_table_rows",
    "binarize_file",
    "build_vocabulary",
    "codeswitch_file",
    "learn_bpe",
    "make_bpe_applier",
    "read_codes",
    "write_anchor_table",
    "write_codes",
]
