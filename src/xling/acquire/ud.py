"""UD treebanks (Wu §3.2: UD v2.3 English-EWT, French-GSD, Russian-GSD, Chinese-GSD) from the
unpacked release into the contract layout ``R/data/ud/{dataset}/{lang}/{split}.conllu``."""

from __future__ import annotations

import shutil
from pathlib import Path

from xling.atomic import atomic_open
from xling.contracts.conllu import read_conllu


def import_treebank(release_dir: str | Path, treebank: str, outputs: dict[str, str | Path]) -> dict:
    """Copy ``{treebank}/*-ud-{split}.conllu`` for every split in ``outputs``.

    Each file is parsed first, so a malformed treebank stops here with its file and line. Returns
    the number of sentences per split.
    """
    matches = sorted(Path(release_dir).rglob(treebank))
    folders = [m for m in matches if m.is_dir()]
    if not folders:
        raise FileNotFoundError(
            f"treebank folder {treebank!r} not found under {release_dir}; check config key "
            "tasks.parsing.treebanks against the release's folder names (e.g. UD_English-EWT)"
        )
    counts = {}
    for split, out_path in outputs.items():
        files = sorted(folders[0].glob(f"*-ud-{split}.conllu"))
        if len(files) != 1:
            raise FileNotFoundError(
                f"{folders[0]}: expected one *-ud-{split}.conllu file, found {len(files)}"
            )
        counts[split] = len(read_conllu(files[0]))
        with atomic_open(out_path, "wb") as out, open(files[0], "rb") as source:
            shutil.copyfileobj(source, out)
    return counts
