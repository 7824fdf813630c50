"""What one pretraining job reads and writes (``docs/contracts.md`` section 4)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from xling.base.fileio import StrPath
from xling.pretrain.settings import PretrainSettings


@dataclass(frozen=True)
class PretrainJob:
    """One masked LM pretrained on the streams of ``data_dir``, and where its outputs go.

    ``data_dir`` is a vocab stage directory (``{lang}.{train,valid}.npy`` and ``tokenizer/``, or
    the tokenizer in ``tokenizer_dir``); ``languages`` are the model's languages (one for a
    monolingual model). ``language_token_ids`` (the ids each language can produce) matters only
    with separate embeddings; see :func:`xling.pretrain.inputs.read_inputs` for where it comes
    from otherwise. Outputs: the selected model directory ``out_model_dir``, ``curve_csv``,
    ``summary_json`` and, if given, ``figure`` (the curve as png, titled ``figure_title``). The
    resumable state lives in ``work_dir``, never an output. Progress lines go to stdout and, if
    given, to ``log_file``.
    """

    data_dir: StrPath
    languages: Sequence[str]
    out_model_dir: StrPath
    work_dir: StrPath
    curve_csv: StrPath
    summary_json: StrPath
    settings: PretrainSettings
    language_token_ids: Mapping[str, Sequence[int]] | None = None
    tokenizer_dir: StrPath | None = None
    log_file: StrPath | None = None
    figure: StrPath | None = None
    figure_title: str = ""

    @classmethod
    def in_folder(
        cls,
        folder: StrPath,
        data_dir: StrPath,
        languages: Sequence[str],
        settings: PretrainSettings,
        **options,
    ) -> PretrainJob:
        """The job with its outputs in one folder, as a study's pretraining job lays them out:
        ``model/``, ``.work/``, ``curve.csv`` and ``summary.json``; ``options``: the other
        fields."""
        folder = Path(folder)
        outputs = (
            folder / "model",
            folder / ".work",
            folder / "curve.csv",
            folder / "summary.json",
        )
        return cls(data_dir, languages, *outputs, settings, **options)

    def outputs(self) -> dict[str, StrPath]:
        """Every output, by name (the names its kept links have, :mod:`xling.jobs.finished`)."""
        outputs = {"model": self.out_model_dir, "curve": self.curve_csv}
        outputs["summary"] = self.summary_json
        if self.figure is not None:
            outputs["figure"] = self.figure
        return outputs
