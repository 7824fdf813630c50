"""Figures of the report, drawn with matplotlib's non-interactive backend."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on cluster nodes
import matplotlib.pyplot as plt
import pandas as pd

from xling.base.atomic import atomic_open


def plot_cka_layers(tables: Mapping[tuple[str, str], pd.DataFrame], out_path: str | Path) -> None:
    """Linear CKA per layer for each (pair, variant): trained encoder solid, random dashed.

    The dashed line pairs the trained model's English states with a random encoder's states of the
    other language. It is the reference a trained model should clear, not a bound: in the demo,
    whose positions are fixed sinusoids, it tracks sentence length and can lie above the trained
    model (docs/analysis.md). Wu, Conneau et al. (2020), Figure 7, is ``wu_figure7.png``, whose
    random row pairs English monolingual states with a random monolingual encoder.
    """
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=150)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, ((pair, variant), table) in enumerate(sorted(tables.items())):
        color = colors[index % len(colors)]
        for encoder, style in (("trained", "-"), ("random", "--")):
            rows = table[table["encoder"] == encoder].sort_values("layer")
            if rows.empty:
                continue
            label = f"{pair} {variant}"
            if encoder == "random":  # its English side is the trained model's (docstring)
                label = f"{pair}: {variant} (en) vs random encoder ({pair.split('-')[1]})"
            ax.plot(rows["layer"], rows["cka"], style, color=color, marker="o", ms=3, label=label)
    layers = sorted({int(layer) for t in tables.values() for layer in t["layer"]})
    ax.set_xticks(layers, [f"L{layer}" for layer in layers])
    ax.set_ylim(0, 1)
    ax.set_xlabel("layer (L0 = embeddings)")
    ax.set_ylabel("linear CKA")
    ax.set_title("CKA of mean-pooled parallel sentence representations")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2, loc="lower left")
    fig.tight_layout()
    with atomic_open(out_path, "wb") as handle:
        fig.savefig(handle, format="png")
    plt.close(fig)
