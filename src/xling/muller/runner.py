"""One Muller fine-tuning job: one run, or every run of a setup in one process.

A run is ``xling.finetune.run_finetune`` with the setup's cached encoding, a RANDOM-INIT group
(none for the reference model) and a seed; runs that measure similarity also write the
cross-lingual similarity of their fine-tuned encoder at the selected epoch (``similarity.csv``,
and on bootstrap resamples of the parallel sentences, ``similarity_resamples.csv``).
Each run's directory ends with ``done.json`` (its fingerprint and metrics), written last: a job
killed half-way reruns only the runs that have none, or whose fingerprint changed.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from xling.atomic import write_json
from xling.fileio import file_stamp
from xling.finetune.done import done_digest, finished, mark_done
from xling.finetune.settings import FinetuneSettings
from xling.muller import REFERENCE
from xling.muller.collect import SIMILARITY, SIMILARITY_RESAMPLES

log = logging.getLogger(__name__)


def run_fingerprint(
    run: Mapping[str, Any],
    task: str,
    settings: Mapping,
    encoded: Path,
    resamples: Mapping[str, int] | None = None,
    *,
    parallel: Path | None = None,
    debiased: bool = False,
) -> dict:
    """What a finished run was made from; a run that measures similarity also records what it
    measured on and how (the parallel sentences, the estimator, how its resamples were drawn:
    ``resamples``, count and seed), which only the run itself can compute again (its fine-tuned
    encoder is not kept)."""
    similarity: bool | dict = bool(run["similarity"])
    if similarity:
        similarity = {"debiased": debiased}
        if parallel is not None:
            similarity["parallel"] = file_stamp(parallel)
        if resamples is not None:
            similarity["resamples"] = dict(resamples)
    return {
        "task": task,
        "group": run["group"],
        "seed": run["seed"],
        "hp": dict(run["hp"]),
        "settings": dict(settings),
        "similarity": similarity,
        "encoded": file_stamp(encoded),
    }


def run_job(
    model: str,
    task: str,
    source: str,
    settings_fields: Mapping[str, Any],
    runs: Sequence[Mapping[str, Any]],
    encoded_path: str | Path,
    job_file: str | Path,
    *,
    parallel_path: str | Path | None = None,
    debiased: bool = False,
    resamples: Mapping[str, int] | None = None,
    threads: int = 1,
) -> list[dict]:
    """Run ``runs`` (dicts: group, seed, hp, dir, similarity) in order; write ``job_file`` (the
    run directories and the digests of their ``done.json``) last.

    The encoding cache, the tokenizer and the parallel sentences are loaded once for all runs.
    ``resamples`` (``{"count": n, "seed": s}``, config ``report.resamples`` and ``seed``): the
    bootstrap resamples of the parallel sentences on which similarity runs also measure their CKA.
    """
    import torch

    from xling.analysis.loading import load_model_and_tokenizer
    from xling.finetune import run_finetune
    from xling.muller.encoded import load_encoded

    torch.set_num_threads(threads)
    encoded_path = Path(encoded_path)
    encoded = load_encoded(encoded_path, task)
    _, tokenizer = load_model_and_tokenizer(model)
    parallel = torch.load(parallel_path, weights_only=True) if parallel_path else None
    results = []
    for run in runs:
        run_dir = Path(run["dir"])
        fingerprint = run_fingerprint(
            run, task, settings_fields, encoded_path, resamples,
            parallel=parallel_path and Path(parallel_path), debiased=debiased,
        )  # fmt: skip
        metrics = finished(run_dir, fingerprint)
        if metrics is None:
            started = time.perf_counter()
            settings = FinetuneSettings.from_config(
                task, settings_fields, seed=run["seed"], source_lang=source
            )
            on_selected = None
            if run["similarity"]:
                if parallel is None:
                    raise ValueError(f"run {run_dir} measures similarity but has no parallel input")
                # the fine-tuned model against its own source language only: an English
                # model's similarity is English's to the targets (Muller et al.'s Table 4)
                on_selected = _similarity_writer(
                    run_dir, tokenizer, parallel, [source], debiased, resamples
                )
            metrics = run_finetune(
                task,
                model,
                None,
                run["hp"],
                run_dir,
                run_dir / ".work",
                settings,
                threads=threads,
                tokenizer=tokenizer,
                encoded=encoded,
                encoded_stamp=file_stamp(encoded_path),
                random_init=None if run["group"] == REFERENCE else run["group"],
                on_selected=on_selected,
                on_done=functools.partial(mark_done, run_dir, fingerprint),
                config_section="muller.tasks",
            )
            log.info("%s done in %.1f s", run_dir, time.perf_counter() - started)
        results.append(metrics)
    write_json(
        job_file,
        {
            "runs": [str(run["dir"]) for run in runs],
            "done": [done_digest(run["dir"]) for run in runs],
        },
    )
    return results


def _similarity_writer(run_dir: Path, tokenizer, parallel, sources, debiased, resamples):
    from xling.muller.similarity import pooled_parallel, write_similarity

    resamples = resamples or {"count": 0, "seed": 0}

    def write(model) -> None:
        pooled = pooled_parallel(model.encoder, tokenizer, parallel)
        table, resampled = run_dir / SIMILARITY, run_dir / SIMILARITY_RESAMPLES
        write_similarity(
            table, resampled, pooled, sources, debiased, resamples["count"], resamples["seed"]
        )

    return write
