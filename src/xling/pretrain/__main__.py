"""Command line for one pretraining job; the multi-GPU launch is ``torchrun ... -m xling.pretrain``.

    torchrun --nproc-per-node 8 -m xling.pretrain --data-dir R/vocab/en-fr/wiki-wiki/joint \\
        --languages en fr --out-model R/pretrain/en-fr/default/model \\
        --work-dir R/pretrain/en-fr/default/.work --curve R/pretrain/en-fr/default/curve.csv \\
        --summary R/pretrain/en-fr/default/summary.json --settings settings.json

Without ``torchrun`` (``python -m xling.pretrain ...``) it runs as one process.
"""

from __future__ import annotations

import argparse
import json

from xling.jobs.deadline import process_start_time
from xling.pretrain.engine import pretrain
from xling.pretrain.job import PretrainJob
from xling.pretrain.settings import PretrainSettings


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m xling.pretrain", description=__doc__)
    parser.add_argument("--data-dir", required=True, help="vocab stage directory of the pair")
    parser.add_argument("--languages", required=True, nargs="+", help="the model's languages")
    parser.add_argument("--out-model", required=True, help="selected model directory (output)")
    parser.add_argument("--work-dir", required=True, help="resumable state (not an output)")
    parser.add_argument("--curve", required=True, help="curve.csv (output)")
    parser.add_argument("--summary", required=True, help="summary.json (output)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--settings", help="JSON or YAML file of PretrainSettings fields")
    source.add_argument("--settings-json", help="the same mapping as an inline JSON string")
    parser.add_argument("--tokenizer-dir", help="default: DATA_DIR/tokenizer")
    parser.add_argument("--log-file", help="append progress lines here too")
    parser.add_argument("--device", help="default: cuda:LOCAL_RANK if a GPU is visible, else cpu")
    parser.add_argument("--keep-work-dir", action="store_true", help="keep checkpoints at the end")
    parser.add_argument("--figure", help="the curve as png (output)")
    parser.add_argument("--figure-title", default="", help="the figure's title")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    if args.settings:
        settings = PretrainSettings.load(args.settings)
    elif args.settings_json:
        settings = PretrainSettings.from_dict(json.loads(args.settings_json))
    else:
        settings = PretrainSettings()
    outputs = (args.out_model, args.work_dir, args.curve, args.summary)
    job = PretrainJob(
        args.data_dir, args.languages, *outputs, settings, tokenizer_dir=args.tokenizer_dir,
        log_file=args.log_file, figure=args.figure, figure_title=args.figure_title,
    )  # fmt: skip
    # The attempt's resume time counts from the process's start: torch's import comes before.
    started = process_start_time()
    return pretrain(job, device=args.device, keep_work_dir=args.keep_work_dir, started=started)


if __name__ == "__main__":
    main()
