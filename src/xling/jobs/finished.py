"""A finished training job's outputs, kept restorable in its work directory.

Snakemake deletes a job's outputs before it runs the job again, and it runs again a job that
finished while Snakemake itself was stopped (the job's incomplete marker stays, and the profile's
`rerun-incomplete` reruns it), or whose outputs a shared file system showed only after
`latency-wait`. A training job that had deleted its checkpoints once its outputs were written
would then start from scratch: days of GPU time for a pretraining job of the paper study.

So the job replaces its checkpoints by hard links to its outputs, in ``<work_dir>/finished/``, with
the job's key. While the outputs exist the links share their disk blocks (no space is used twice); a
rerun of the same job (the same key) puts them back in seconds, writing the training's log
(:mod:`xling.jobs.joblog`) into its own, and a job with another key discards them and trains. The
key holds the settings, the data and the source of the xling package
(:func:`xling.base.digest.source_digest`):
``--forcerun`` after a change of the code trains again, as it should. Where the file system cannot
link (another device), the files are copied. Delete the work directory to train the same job again.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from xling.base.atomic import (
    atomic_directory,
    fsync_directory,
    fsync_file,
    remove_stale_parts,
    write_json,
)
from xling.jobs import joblog

FOLDER = "finished"
RECORD = "finished.json"

Outputs = Mapping[str, "str | os.PathLike"]


def keep(work_dir: str | os.PathLike, outputs: Outputs, key: Mapping[str, Any]) -> Path:
    """Link every output (a file or a folder) under ``<work_dir>/finished/<name>`` beside a record
    of the job's key and each file's size; the folder appears complete or not at all."""
    files: dict[str, int] = {}
    with atomic_directory(Path(work_dir) / FOLDER) as folder:
        for name, path in outputs.items():
            for target in _link_files(Path(path), folder / name):
                files[target.relative_to(folder).as_posix()] = target.stat().st_size
        history = joblog.history_path(work_dir)
        if history.is_file():  # the training's log, for a restore to write (not an output):
            # a copy, since a rerun after a kill before the clean-up appends to the original
            shutil.copy2(history, folder / joblog.HISTORY)
        write_json(folder / RECORD, {"key": _plain(key), "files": files})
    return Path(work_dir) / FOLDER


def restore(
    work_dir: str | os.PathLike,
    outputs: Outputs,
    key: Mapping[str, Any],
    log: Callable[[str], None] = print,
) -> bool:
    """Put the kept outputs of the same job back at ``outputs``; False (and nothing kept any more)
    when there are none, they belong to another job, or a file is missing or of another size."""
    folder = Path(work_dir) / FOLDER
    try:
        record = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        discard(work_dir)
        return False
    files = record.get("files", {})
    if record.get("key") != _plain(key) or not all(
        _size(folder / relative) == size for relative, size in files.items()
    ):
        log(f"{folder} holds the outputs of another job or an incomplete copy: training afresh")
        discard(work_dir)
        return False
    for name, path in outputs.items():
        _put_back(folder / name, Path(path))
    log(f"restored this finished job's outputs from {folder} (delete {work_dir} to train again)")
    joblog.replay(folder / joblog.HISTORY, "the training of these outputs logged")
    # This attempt trained nothing: its lines are no part of the job's history.
    joblog.history_path(work_dir).unlink(missing_ok=True)
    return True


def discard(work_dir: str | os.PathLike) -> None:
    shutil.rmtree(Path(work_dir) / FOLDER, ignore_errors=True)


def _link_files(source: Path, target: Path) -> list[Path]:
    """Link ``source`` (a file, or a folder's every file) at ``target``; the files linked there."""
    if source.is_dir():
        files = [path for path in sorted(source.rglob("*")) if path.is_file()]
        pairs = [(path, target / path.relative_to(source)) for path in files]
    else:
        pairs = [(source, target)]
    for file, link in pairs:
        link.parent.mkdir(parents=True, exist_ok=True)
        _link_or_copy(file, link)
    return [link for _, link in pairs]


def _put_back(kept: Path, path: Path) -> None:
    if kept.is_dir():
        with atomic_directory(path) as folder:
            _link_files(kept, folder)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_parts(path)
    part = path.with_name(f".{path.name}.restore.part")
    with contextlib.suppress(FileNotFoundError):
        part.unlink()
    _link_or_copy(kept, part)
    fsync_file(part)  # a copy's bytes (a link's are on disk already), before the name appears
    os.replace(part, path)
    fsync_directory(path.parent)


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:  # another device, or a file system without hard links
        shutil.copy2(source, target)


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def _plain(key: Mapping[str, Any]) -> Any:
    """The key as its JSON record reads back (tuples as lists, keys as strings)."""
    return json.loads(json.dumps(key, sort_keys=True, default=str))
