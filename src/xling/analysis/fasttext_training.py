"""The demo's fastText baseline (Wu, Conneau et al. 2020, §5.1.1), trained with the ``fasttext``
package on the monolingual model's own text. A module of its own: only the rule that trains
vectors needs the compiled package; reading them (:mod:`xling.analysis.fasttext_vectors`) does not.
"""

from __future__ import annotations

import numpy as np

from xling.analysis.fasttext_vectors import FASTTEXT_LINE_END, write_vec
from xling.base.errors import InputFileError
from xling.base.fileio import StrPath


def train_fasttext(
    corpus_path: StrPath,
    out_vec_path: StrPath,
    *,
    dim: int,
    epochs: int,
    min_count: int,
    seed: int,
    threads: int,
    max_words: int,
) -> int:
    """Train skipgram vectors on a tokenized corpus (one sentence a line) and write the
    ``max_words`` most frequent words to ``out_vec_path`` in the ``.vec`` format, atomically.

    Other hyperparameters are fastText's defaults (those of ``fasttext skipgram``: window 5, 5
    negatives, character n-grams of 3-6). A word's vector is fastText's word vector (its own row
    plus its n-grams, as fastText's ``.vec`` output has it); fastText's line-end token ``</s>``
    is left out. Values are written with 9 significant digits, so they read back exactly.

    Reproducibility: ``seed`` fixes the initialisation and each thread's sampling. With
    ``threads=1`` a run is bit-identical to another on the same build; with more threads the
    lock-free (Hogwild) updates interleave differently from run to run, so the vectors differ
    (not their quality).

    Returns:
        The number of words written.
    """
    import fasttext  # only the rules that train vectors need the package
    import fasttext_pybind

    # fasttext 0.9.3's train_unsupervised() does not accept `seed` (its C++ arguments do), so the
    # arguments are set here and training is called as train_unsupervised() calls it.
    args = fasttext_pybind.args()
    args.input = str(corpus_path)
    args.output = ""
    args.saveOutput = False
    args.model = fasttext_pybind.model_name.skipgram
    args.dim, args.epoch, args.minCount = dim, epochs, min_count
    args.seed, args.thread, args.verbose = seed, threads, 0
    model = fasttext.FastText._FastText(args=args)
    try:
        fasttext_pybind.train(model.f, args)
    except ValueError as error:  # "Empty vocabulary...", "... cannot be opened for training!"
        raise InputFileError(
            corpus_path,
            f"fastText cannot train on it ({error})",
            fix="check that the corpus exists and has words seen at least min_count times",
        ) from None
    words = [w for w in model.get_words() if w != FASTTEXT_LINE_END]
    words = words[:max_words]
    write_vec(out_vec_path, words, np.stack([model.get_word_vector(w) for w in words]))
    return len(words)
