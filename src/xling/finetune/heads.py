"""Task-specific layers on top of the encoder (Wu, Conneau et al. 2020, section 3.2).

* XNLI: a linear softmax classifier on the first token's representation.
* NER and POS tagging: a linear softmax classifier on the first subword of each word.
* Parsing: a graph-based biaffine parser (Dozat and Manning 2017) on the first subword of each word,
  with the sentence's first token standing for ROOT.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def gather_words(hidden: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """(batch, tokens, dim) x (batch, words) token positions -> (batch, words, dim)."""
    index = positions.unsqueeze(-1).expand(-1, -1, hidden.shape[-1])
    return torch.gather(hidden, 1, index)


class SequenceClassifier(nn.Module):
    """Linear softmax classifier on the representation of the first token (XNLI)."""

    def __init__(self, dim: int, num_labels: int, dropout: float):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.output = nn.Linear(dim, num_labels)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.output(self.dropout(hidden[:, 0]))


class WordTagger(nn.Module):
    """Linear softmax classifier on the first subword of each word (NER, POS)."""

    def __init__(self, dim: int, num_labels: int, dropout: float):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.output = nn.Linear(dim, num_labels)

    def forward(self, hidden: torch.Tensor, first_subword: torch.Tensor) -> torch.Tensor:
        """Logits (batch, words, labels)."""
        return self.output(self.dropout(gather_words(hidden, first_subword)))


class Biaffine(nn.Module):
    """``score[b, i, j, k] = x_i^T U_k y_j + w_k^T [x_i; y_j] + b_k`` (Dozat and Manning 2017)."""

    def __init__(self, in_dim: int, out_dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(out_dim, in_dim, in_dim))
        self.linear = nn.Linear(2 * in_dim, out_dim)

    def pairwise(self, dep: torch.Tensor, head: torch.Tensor) -> torch.Tensor:
        """All pairs: (batch, n, d) x (batch, m, d) -> (batch, n, m, out)."""
        bilinear = torch.einsum("bnd,kde,bme->bnmk", dep, self.weight, head)
        w_dep, w_head = self.linear.weight.split(dep.shape[-1], dim=1)
        return (
            bilinear
            + (dep @ w_dep.T).unsqueeze(2)
            + (head @ w_head.T).unsqueeze(1)
            + self.linear.bias
        )

    def aligned(self, dep: torch.Tensor, head: torch.Tensor) -> torch.Tensor:
        """Matched pairs: (batch, n, d) x (batch, n, d) -> (batch, n, out)."""
        bilinear = torch.einsum("bnd,kde,bne->bnk", dep, self.weight, head)
        return bilinear + self.linear(torch.cat([dep, head], dim=-1))


class BiaffineParser(nn.Module):
    """Graph-based dependency parser of Dozat and Manning (2017).

    Four ELU MLPs project word representations into arc-dependent, arc-head, label-dependent and
    label-head spaces; a biaffine scorer gives every (dependent, head) arc a score and a second one
    scores the relation of a (dependent, head) pair. Node 0 is ROOT (the first token of the input).
    """

    def __init__(self, dim: int, num_labels: int, arc_dim: int, label_dim: int, dropout: float):
        super().__init__()

        def mlp(out_dim: int) -> nn.Module:
            return nn.Sequential(nn.Dropout(dropout), nn.Linear(dim, out_dim), nn.ELU())

        self.arc_dep, self.arc_head = mlp(arc_dim), mlp(arc_dim)
        self.label_dep, self.label_head = mlp(label_dim), mlp(label_dim)
        self.arc = Biaffine(arc_dim, 1)
        self.label = Biaffine(label_dim, num_labels)

    def forward(
        self, hidden: torch.Tensor, first_subword: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Arc scores (batch, n + 1, n + 1) as ``[dep, head]`` and the label-space projections.

        ``first_subword`` (batch, n) holds word positions; position 0 of the input is ROOT.
        """
        root = torch.zeros_like(first_subword[:, :1])
        nodes = gather_words(hidden, torch.cat([root, first_subword], dim=1))
        arcs = self.arc.pairwise(self.arc_dep(nodes), self.arc_head(nodes)).squeeze(-1)
        return arcs, self.label_dep(nodes), self.label_head(nodes)

    def label_scores(
        self, label_dep: torch.Tensor, label_head: torch.Tensor, heads: torch.Tensor
    ) -> torch.Tensor:
        """Relation logits (batch, n + 1, labels) of each node attached to its ``heads`` entry."""
        index = heads.clamp(min=0).unsqueeze(-1).expand(-1, -1, label_head.shape[-1])
        return self.label.aligned(label_dep, torch.gather(label_head, 1, index))


def arc_mask(lengths: torch.Tensor, size: int) -> torch.Tensor:
    """(batch, size, size): True where ``[dep, head]`` is a possible arc (no loop, no padding)."""
    nodes = torch.arange(size, device=lengths.device)
    real = nodes[None, :] <= lengths[:, None]
    return real[:, None, :] & (nodes[None, :, None] != nodes[None, None, :])


def parser_loss(
    parser: BiaffineParser,
    arcs: torch.Tensor,
    label_dep: torch.Tensor,
    label_head: torch.Tensor,
    lengths: torch.Tensor,
    gold_heads: torch.Tensor,
    gold_labels: torch.Tensor,
) -> torch.Tensor:
    """Arc cross-entropy over possible heads plus label cross-entropy at the gold head.

    ``gold_heads``/``gold_labels`` are (batch, n + 1) with -100 at ROOT, padding and ignored words.
    Unlike crosslingual-nlp, ROOT is among the candidate heads (it masked it out of the arc loss).
    """
    arcs = arcs.float().masked_fill(~arc_mask(lengths, arcs.shape[1]), torch.finfo(torch.float).min)
    arc_loss = F.cross_entropy(arcs.flatten(0, 1), gold_heads.flatten(), ignore_index=-100)
    labels = parser.label_scores(label_dep, label_head, gold_heads)
    label_loss = F.cross_entropy(
        labels.float().flatten(0, 1), gold_labels.flatten(), ignore_index=-100
    )
    return arc_loss + label_loss
