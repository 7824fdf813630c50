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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xling.base.fileio import file_stamp
from xling.finetune.settings import FinetuneSettings
from xling.jobs.done import run_once, write_job_file
from xling.model.random_init import BERT
from xling.muller import REFERENCE
from xling.muller.collect import SIMILARITY, SIMILARITY_RESAMPLES
from xling.muller.similarity import SimilaritySettings

if TYPE_CHECKING:
    from xling.finetune.data import Encoded
    from xling.finetune.encoding import Tokenizer


def run_fingerprint(
    run: Mapping[str, Any],
    task: str,
    settings: Mapping,
    encoded: Path,
    resamples: Mapping[str, int] | None = None,
    *,
    parallel: Path | None = None,
    debiased: bool = False,
    measure: Mapping[str, Any] | None = None,
    random_init_scheme: str = BERT,
) -> dict:
    """What a finished run was made from; a run that measures similarity also records what it
    measured on and how (the parallel sentences, the estimator, how its resamples were drawn:
    ``resamples``, count and seed, and ``measure``'s settings where they are not the paper's,
    :class:`xling.muller.similarity.SimilaritySettings`), which only the run itself can compute
    again (its fine-tuned encoder is not kept). A RANDOM-INIT run drawn by another scheme than
    ``bert`` records it. What is at its default is left out, so that the fingerprints of runs
    made before those settings existed still match.

    Why so many parameters: each keyword is one setting a finished run is matched on, optional
    and left out at its default so that older runs stay valid; a settings object would have to
    keep the same defaults apart."""
    similarity: bool | dict = bool(run["similarity"])
    if similarity:
        similarity = {"debiased": debiased}
        if parallel is not None:
            similarity["parallel"] = file_stamp(parallel)
        if resamples is not None:
            similarity["resamples"] = dict(resamples)
        changed = SimilaritySettings.from_config(measure).changed()
        if changed:
            similarity["measure"] = changed
    fingerprint = {
        "task": task,
        "group": run["group"],
        "seed": run["seed"],
        "hp": dict(run["hp"]),
        "settings": dict(settings),
        "similarity": similarity,
        "encoded": file_stamp(encoded),
    }
    if run["group"] != REFERENCE and random_init_scheme != BERT:
        fingerprint["random_init_scheme"] = random_init_scheme
    return fingerprint


@dataclass(frozen=True)
class MullerJob:
    """One Muller fine-tuning job: ``runs`` of one setup (``task`` from ``source``) on ``model``.

    A run is a dict: group (RANDOM-INIT group, or the reference), seed, hp, dir, similarity.
    ``settings`` are the task's fields (config ``muller.tasks.<task>``); ``encoded_path`` is the
    setup's encoding cache (:mod:`xling.muller.encoded`). ``job_file``, written last, lists the run
    directories and the digests of their ``done.json``. Runs that measure similarity measure it on
    ``parallel_path`` (the parallel sentences' ids), with the ``debiased`` estimator or not, and on
    ``resamples`` (``{"count": n, "seed": s}``, config ``report.resamples`` and ``seed``) of them,
    as ``measure`` says (``measure``, ``windows``, ``pooling`` of config ``muller.similarity``:
    :class:`xling.muller.similarity.SimilaritySettings`; None: the paper's reading). RANDOM-INIT
    draws its groups by ``random_init_scheme`` (config ``muller.random_init_scheme``:
    :data:`xling.model.random_init.SCHEMES`).
    """

    model: str
    task: str
    source: str
    settings: Mapping[str, Any]
    runs: Sequence[Mapping[str, Any]]
    encoded_path: Path
    job_file: Path
    parallel_path: Path | None = None
    debiased: bool = False
    resamples: Mapping[str, int] | None = None
    measure: Mapping[str, Any] | None = None
    random_init_scheme: str = BERT

    def __post_init__(self) -> None:
        object.__setattr__(self, "encoded_path", Path(self.encoded_path))
        if self.parallel_path is not None:
            object.__setattr__(self, "parallel_path", Path(self.parallel_path))


def run_job(job: MullerJob, *, threads: int = 1) -> list[dict]:
    """Run the job's runs in order, each unless done before with the same fingerprint; write its
    job file last. The encoding cache, the tokenizer and the parallel sentences are loaded once
    for all runs."""
    import torch

    from xling.analysis.loading import load_model_and_tokenizer
    from xling.muller.encoded import load_encoded

    torch.set_num_threads(threads)
    shared = _Shared(
        encoded=load_encoded(job.encoded_path, job.task),
        tokenizer=load_model_and_tokenizer(job.model)[1],
        parallel=torch.load(job.parallel_path, weights_only=True) if job.parallel_path else None,
        threads=threads,
    )
    results = []
    for run in job.runs:
        fingerprint = run_fingerprint(
            run, job.task, job.settings, job.encoded_path, job.resamples,
            parallel=job.parallel_path, debiased=job.debiased, measure=job.measure,
            random_init_scheme=job.random_init_scheme,
        )  # fmt: skip
        train = functools.partial(_run, job, run, shared)
        results.append(run_once(Path(run["dir"]), fingerprint, train))
    run_dirs = [str(run["dir"]) for run in job.runs]
    write_job_file(job.job_file, {"runs": run_dirs}, run_dirs)
    return results


@dataclass(frozen=True)
class _Shared:
    """What every run of a job shares, loaded once: the encoded files, the model's tokenizer, the
    parallel sentences (None without), the thread count."""

    encoded: Encoded
    tokenizer: Tokenizer
    parallel: dict | None
    threads: int


def _run(job: MullerJob, run: Mapping[str, Any], shared: _Shared, on_done) -> dict:
    """Fine-tune one run; a run that measures similarity writes it at its selected epoch."""
    from xling import finetune

    run_dir = Path(run["dir"])
    settings = FinetuneSettings.from_config(
        job.task, job.settings, seed=run["seed"], source_lang=job.source
    )
    on_selected = None
    if run["similarity"]:
        if shared.parallel is None:
            raise ValueError(f"run {run_dir} measures similarity but has no parallel input")
        # the fine-tuned model against its own source language only: an English
        # model's similarity is English's to the targets (Muller et al.'s Table 4)
        on_selected = _similarity_writer(
            run_dir, shared.tokenizer, shared.parallel, [job.source], job.debiased, job.resamples,
            SimilaritySettings.from_config(job.measure),
        )  # fmt: skip
    finetune_job = finetune.FinetuneJob(
        job.task, job.model, None, run["hp"], run_dir, run_dir / ".work", settings,
        random_init=None if run["group"] == REFERENCE else run["group"],
        random_init_scheme=job.random_init_scheme,
        encoded=shared.encoded, encoded_stamp=file_stamp(job.encoded_path),
        config_section="muller.tasks",
    )  # fmt: skip
    return finetune.run_finetune(
        finetune_job,
        threads=shared.threads,
        tokenizer=shared.tokenizer,
        on_selected=on_selected,
        on_done=on_done,
    )


def _similarity_writer(
    run_dir: Path, tokenizer, parallel, sources, debiased, resamples, measure: SimilaritySettings
):
    from xling.muller.similarity import pooled_parallel, write_similarity

    resamples = resamples or {"count": 0, "seed": 0}

    def write(model) -> None:
        pooled = pooled_parallel(model.encoder, tokenizer, parallel, measure.pooling)
        table, resampled = run_dir / SIMILARITY, run_dir / SIMILARITY_RESAMPLES
        write_similarity(
            table, resampled, pooled, sources, debiased, resamples["count"], resamples["seed"],
            measure,
        )  # fmt: skip

    return write
