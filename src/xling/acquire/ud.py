"""UD datasets into the contract layout ``R/data/ud/{dataset}/{lang}/{split}.conllu``.

A dataset of config ``data.ud`` is either treebank folders of an unpacked UD release (Wu §3.2: UD
v2.3 English-EWT, French-GSD, Russian-GSD, Chinese-GSD; Muller et al.: UD v2.4 PUD, EWT, GSD,
PADT, ParTUT, LinES) or files put by hand under ``data.manual_dir`` (the LexNorm tweet treebank of
van der Goot and van Noord 2018, not in UD). Every file is parsed before it is copied, so a
malformed treebank stops here with its file and line.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from xling.acquire.manual import ud_files
from xling.base.atomic import atomic_open
from xling.contracts.conllu import read_conllu


def _copy_validated(source: Path, out_path: str | Path) -> int:
    """Copy one CoNLL-U file after parsing it; returns its number of sentences."""
    count = len(read_conllu(source))
    with atomic_open(out_path, "wb") as out, open(source, "rb") as handle:
        shutil.copyfileobj(handle, out)
    return count


def import_treebank(
    release_dir: str | Path,
    treebank: str,
    outputs: Mapping[str, str | Path],
    dataset: str = "<dataset>",
) -> dict[str, int]:
    """Copy ``{treebank}/*-ud-{split}.conllu`` for every split in ``outputs``.

    ``dataset`` names the config's dataset (``data.ud.<dataset>``) in the error messages. Returns
    the number of sentences per split.
    """
    matches = sorted(Path(release_dir).rglob(treebank))
    folders = [m for m in matches if m.is_dir()]
    if not folders:
        raise FileNotFoundError(
            f"treebank folder {treebank!r} not found under {release_dir}; check config key "
            f"data.ud.{dataset}.treebanks against the release's folder names (e.g. UD_English-EWT)"
        )
    counts = {}
    for split, out_path in outputs.items():
        files = sorted(folders[0].glob(f"*-ud-{split}.conllu"))
        if len(files) != 1:
            raise FileNotFoundError(
                f"{folders[0]}: expected one *-ud-{split}.conllu file, found {len(files)}; if "
                f"the treebank has no {split} split, list the splits it has in config key "
                f"data.ud.{dataset}.splits"
            )
        counts[split] = _copy_validated(files[0], out_path)
    return counts


def import_manual(
    manual_dir: str | Path, dataset: str, lang: str, outputs: Mapping[str, str | Path]
) -> dict[str, int]:
    """Copy the hand-provided ``{manual_dir}/{dataset}/{lang}/{split}.conllu`` of each split."""
    sources = {}
    for split in outputs:
        (path,) = ud_files(dataset, lang, [split], manual_dir)
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} is missing. The UD dataset {dataset!r} cannot be downloaded by the "
                f"workflow: put its {lang} {split} split there by hand, as CoNLL-U (UD v2, ten "
                f"tab-separated columns); docs/contracts.md says where it comes from. Or remove "
                f"data.ud.{dataset} from the config."
            )
        sources[split] = path
    return {split: _copy_validated(sources[split], out) for split, out in outputs.items()}


def import_ud(
    source: Mapping, outputs: Mapping[str, str | Path], release_dir: str | Path | None = None
) -> dict[str, int]:
    """Write ``outputs`` (split -> path) of one language of one UD dataset.

    ``source`` is :func:`xling.study.keys.ud_source`'s description: a treebank of the release
    unpacked in ``release_dir``, or a manual dataset under ``source["manual_dir"]``.
    """
    dataset, lang = source["dataset"], source["lang"]
    if "manual_dir" in source:
        return import_manual(source["manual_dir"], dataset, lang, outputs)
    if release_dir is None:
        raise ValueError(f"UD dataset {dataset!r} comes from a release: pass its unpacked folder")
    return import_treebank(release_dir, source["treebank"], outputs, dataset)
