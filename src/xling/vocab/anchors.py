"""Anchor statistics: vocabulary types shared by the training corpora of the languages of a pair.

A type is *shared* when at least two languages' binarized training corpora use it. The five
special tokens are left out of every count (``</s>`` ends every sentence of every language, and
``<unk>`` stands for different characters), which is why ``per_language_prefixed`` measures 0.
The token share of a language is the fraction of its training tokens (``</s>`` excluded) whose
type is shared. These are the measured "Anchors Pts" of Table 1 (Wu, Conneau et al. 2020, 4.2).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from xling.base.atomic import atomic_open
from xling.base.errors import InputFileError
from xling.base.fileio import StrPath

ANCHOR_COLUMNS = (
    "pair",
    "domains",
    "scheme",
    "src",
    "tgt",
    "vocab_size",
    "src_types",
    "tgt_types",
    "shared_types",
    "src_token_share",
    "tgt_token_share",
)


def anchor_statistics(train_counts: Mapping[str, np.ndarray], n_special: int) -> dict[str, Any]:
    """Shared types and token shares from per-language token counts indexed by id.

    Args:
        train_counts: language -> counts of each id in its training corpus (same length).
        n_special: the first ``n_special`` ids are special tokens and are not counted.
    """
    used = {lang: counts[n_special:] > 0 for lang, counts in train_counts.items()}
    users = np.sum(list(used.values()), axis=0) if used else np.zeros(0)
    shared = users >= 2
    token_share = {}
    for lang, counts in train_counts.items():
        total = int(counts[n_special:].sum())
        covered = int(counts[n_special:][shared].sum())
        token_share[lang] = covered / total if total else 0.0
    return {
        "shared_types": int(shared.sum()),
        "types": {lang: int(mask.sum()) for lang, mask in used.items()},
        "token_share": token_share,
        "special_tokens_excluded": True,
    }


def anchor_table_rows(stats_paths: Sequence[StrPath]) -> list[dict[str, Any]]:
    """One row (keys :data:`ANCHOR_COLUMNS`) per vocabulary ``stats.json`` of a language pair."""
    rows = []
    for path in stats_paths:
        try:
            with open(path, encoding="utf-8") as handle:
                stats = json.load(handle)
            src, tgt = stats["languages"]
            anchors = stats["anchors"]
            rows.append(
                {
                    "pair": stats.get("pair") or f"{src}-{tgt}",
                    "domains": stats.get("domains") or "",
                    "scheme": stats["scheme"],
                    "src": src,
                    "tgt": tgt,
                    "vocab_size": stats["vocab_size"],
                    "src_types": anchors["types"][src],
                    "tgt_types": anchors["types"][tgt],
                    "shared_types": anchors["shared_types"],
                    "src_token_share": round(anchors["token_share"][src], 6),
                    "tgt_token_share": round(anchors["token_share"][tgt], 6),
                }
            )
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise InputFileError(
                path,
                f"not a vocabulary stats file of a language pair ({type(error).__name__}: {error})",
                fix="rebuild it with the vocab stage (xling.vocab.build_vocabulary)",
            ) from None
    return rows


def write_anchor_table(stats_paths: Sequence[StrPath], out_path: StrPath) -> list[dict[str, Any]]:
    """Write ``anchors.csv`` (columns :data:`ANCHOR_COLUMNS`) atomically; return its rows."""
    rows = anchor_table_rows(stats_paths)
    with atomic_open(out_path) as out:
        writer = csv.DictWriter(out, fieldnames=ANCHOR_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return rows
