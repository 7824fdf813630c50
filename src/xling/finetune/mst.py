"""Maximum spanning tree decoding with exactly one word attached to ROOT.

Scores are ``scores[dep, head]`` over nodes ``0..n`` (node 0 = ROOT, row 0 unused). The decoder is
Chu-Liu-Edmonds (non-projective, as UD needs) written with numpy array operations: each contraction
step is a handful of vectorized reductions over the score matrix, never a loop over arcs. A batch
first takes the greedy heads of all sentences at once and only the sentences whose greedy heads are
not already a single-rooted tree go through Chu-Liu-Edmonds; after a little training that is a
minority.

No library is used: networkx's ``maximum_spanning_arborescence`` is pure Python per arc and has no
single-root constraint; ``torch-struct``/``supar`` are not dependencies of this project.

Single root: every ROOT arc is lowered by a constant ``M`` larger than any possible difference of
tree scores, so the best tree has as few ROOT arcs as possible (one) and, among those, the same
ranking as before (each loses ``M`` exactly once). ``bench/finetune.py`` compares this decoder's
speed with a plain Python Chu-Liu-Edmonds; the tests check optimality against brute force.
"""

from __future__ import annotations

import math

import numpy as np
import torch


def _find_cycle(heads: np.ndarray) -> np.ndarray | None:
    """Nodes of one cycle of the head graph (``heads[0] == 0``), or None if it is a tree."""
    reach = heads
    # Pointer jumping: after 2**k >= n steps every node has landed on ROOT or on a cycle.
    for _ in range(math.ceil(math.log2(len(heads))) + 1):
        reach = reach[reach]
    on_cycle = reach[reach != 0]
    if on_cycle.size == 0:
        return None
    cycle = [int(on_cycle[0])]
    node = int(heads[cycle[0]])
    while node != cycle[0]:  # one step per cycle member
        cycle.append(node)
        node = int(heads[node])
    return np.asarray(cycle)


def _chu_liu_edmonds(scores: np.ndarray) -> np.ndarray:
    """Heads of the maximum spanning arborescence rooted at node 0 (``scores[dep, head]``)."""
    heads = scores.argmax(axis=1)
    heads[0] = 0
    cycle = _find_cycle(heads)
    if cycle is None:
        return heads
    in_cycle = np.zeros(len(scores), dtype=bool)
    in_cycle[cycle] = True
    rest = np.flatnonzero(~in_cycle)  # rest[0] == 0, ROOT
    # Entering the cycle at v from u replaces v's cycle arc: the gain is relative to that arc.
    cycle_rows = scores[cycle]
    enter = cycle_rows[:, rest] - cycle_rows[np.arange(len(cycle)), heads[cycle], None]
    enter_at = enter.argmax(axis=0)
    # Leaving the cycle towards d: the best cycle member as d's head.
    rest_rows = scores[rest]
    leave = rest_rows[:, cycle]
    leave_from = leave.argmax(axis=1)
    size = len(rest)
    contracted = np.empty((size + 1, size + 1))
    contracted[:size, :size] = rest_rows[:, rest]
    contracted[:size, size] = leave[np.arange(size), leave_from]
    contracted[size, :size] = enter[enter_at, np.arange(size)]
    contracted[size, size] = -np.inf
    contracted[0, :] = -np.inf
    sub = _chu_liu_edmonds(contracted)
    result = heads.copy()
    rest_heads = sub[:size]
    from_cycle = rest_heads == size
    result[rest[~from_cycle]] = rest[rest_heads[~from_cycle]]
    result[rest[from_cycle]] = cycle[leave_from[from_cycle]]
    entry = sub[size]
    result[cycle[enter_at[entry]]] = rest[entry]
    result[0] = 0
    return result


def mst_heads(scores: np.ndarray) -> np.ndarray:
    """Best single-rooted dependency tree for one sentence.

    ``scores`` is (n + 1, n + 1) with ``scores[dep, head]`` (log-probabilities, say; -inf forbids an
    arc, except to ROOT); the diagonal and row 0 are ignored. Returns ``heads`` of length n + 1 with
    ``heads[0] == 0`` and ``heads[d]`` in 1..n, or 0 for exactly one word ``d``.
    """
    scores = np.array(scores, dtype=np.float64)
    size = len(scores)
    if scores.shape != (size, size) or size < 2:
        raise ValueError(f"scores must be (n + 1, n + 1) with n >= 1, got {scores.shape}")
    if np.isnan(scores).any():
        raise ValueError("scores contain NaN")
    np.fill_diagonal(scores, -np.inf)
    scores[0, :] = -np.inf
    if not np.isfinite(scores[1:, 0]).all():
        raise ValueError("every word needs a finite score for attaching to ROOT")
    finite = scores[np.isfinite(scores)]
    # Any two trees differ by less than n * (max - min) in score; M exceeds that.
    penalty = (size - 1) * (finite.max() - finite.min()) + 1.0
    scores[1:, 0] -= penalty
    return _chu_liu_edmonds(scores)


def _are_single_rooted_trees(heads: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Per sentence of a batch: do these heads form a tree with one ROOT arc? (vectorized)."""
    words = torch.arange(heads.shape[1], device=heads.device)
    valid = (words[None, :] >= 1) & (words[None, :] <= lengths[:, None])
    heads = torch.where(valid, heads, torch.zeros_like(heads))
    reach = heads
    for _ in range(math.ceil(math.log2(heads.shape[1])) + 1):
        reach = torch.gather(reach, 1, reach)
    acyclic = (reach == 0).all(dim=1)
    root_arcs = ((heads == 0) & valid).sum(dim=1)
    return acyclic & (root_arcs == 1)


def decode_trees(scores: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Best single-rooted trees for a padded batch.

    ``scores`` is (batch, N + 1, N + 1) with ``scores[b, dep, head]``; sentence ``b`` uses nodes
    ``0..lengths[b]``. Returns (batch, N + 1) heads, 0 at position 0 and at padding.
    """
    size = scores.shape[1]
    nodes = torch.arange(size, device=scores.device)
    allowed = (nodes[None, None, :] <= lengths[:, None, None]) & (
        nodes[None, :, None] != nodes[None, None, :]
    )
    masked = scores.float().masked_fill(~allowed, float("-inf"))
    heads = masked.argmax(dim=2)
    heads[:, 0] = 0
    padding = nodes[None, :] > lengths[:, None]
    heads = heads.masked_fill(padding, 0)
    good = _are_single_rooted_trees(heads, lengths)
    redo = torch.nonzero(~good).flatten().tolist()
    if redo:
        lengths_cpu = lengths.cpu().tolist()
        scores_cpu = scores.detach().float().cpu().numpy()
        fixed = heads.cpu().clone()
        for b in redo:
            n = lengths_cpu[b] + 1
            fixed[b, :n] = torch.from_numpy(mst_heads(scores_cpu[b, :n, :n]))
        heads = fixed.to(scores.device)
    return heads
