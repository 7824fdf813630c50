"""Preprocessing: raw text -> tokenized sentences (segmenters, normalization, split, shards).

Public API:

* :class:`TextPipeline`, :func:`pipeline_for_language`: one language's text pipeline
  (segmenter + lowercasing + accent removal), serializable to a dict.
* :func:`tokenize_file`: raw file -> tokenized file, line by line, streaming, atomic.
* :func:`split_corpus`: seeded train / valid / test split.
* :func:`split_into_shards`, :func:`concatenate_files`, :func:`shard_line_ranges`: scatter/gather.
* :func:`extract_wikipedia`: MediaWiki dump -> one paragraph a line, with wikiextractor.
* :func:`register_segmenter`, :func:`available_segmenters`: the segmenter registry;
  :func:`read_user_dictionary`: a segmenter's user words (jieba's user dictionary format).

Errors (:class:`xling.base.errors.InputFileError`, ...) and line-oriented file reading
(:mod:`xling.base.fileio`) are shared by every stage and live at package level.
"""

from xling.preprocess.normalize import remove_accents
from xling.preprocess.pipeline import TextPipeline, pipeline_for_language, tokenize_file
from xling.preprocess.segmenters import (
    available_segmenters,
    read_user_dictionary,
    register_segmenter,
)
from xling.preprocess.shards import concatenate_files, shard_line_ranges, split_into_shards
from xling.preprocess.split import SplitSizes, split_corpus
from xling.preprocess.wikipedia import extract_wikipedia

__all__ = [
    "SplitSizes",
    "TextPipeline",
    "available_segmenters",
    "concatenate_files",
    "extract_wikipedia",
    "pipeline_for_language",
    "read_user_dictionary",
    "register_segmenter",
    "remove_accents",
    "shard_line_ranges",
    "split_corpus",
    "split_into_shards",
    "tokenize_file",
]
