"""Adapter: pretrain one masked LM (pair x variant); resumes from its work directory.

One process trains in this one; with several GPUs (resources gpu, or nodes x gpus_per_node on a
cluster) it starts ``python -m xling.pretrain`` under torchrun, as xling.cluster.launch decides.
Whatever the GPUs, the step trains the config's global batch (xling.pretrain.batching).
"""

import _bootstrap


def main(smk):
    from pathlib import Path

    from xling.cluster import launch_from_resources
    from xling.cluster.launch import check_stop_margin
    from xling.jobs.deadline import process_start_time
    from xling.pretrain import PretrainJob, PretrainSettings, pretrain
    from xling.pretrain.batching import plan_batches

    launch = launch_from_resources(dict(smk.resources.items()))
    # How the job runs, not what it trains: not params (changing them must not rerun a finished
    # model), so read from the config itself.
    fields = dict(smk.params.pretrain)
    job_keys = ("checkpoint_minutes", "compile_layers", "stop_margin_minutes", "micro_batch")
    for key in (*job_keys, "max_train_minutes", "signal_stop_attempts"):
        if key in smk.config["pretrain"]:
            fields[key] = smk.config["pretrain"][key]
    threads = smk.threads if launch.in_process else max(smk.threads // launch.processes_per_node, 1)
    settings = PretrainSettings(
        architecture=smk.params.model, seed=smk.params.seed, threads=threads, **fields
    )
    # Before any process starts: a GPU count that cannot split the global batch stops here, and a
    # stop margin that the profile's early signal would beat.
    plan_batches(settings.world_size, settings.batch_size, launch.world_size)
    refused = check_stop_margin(settings.stop_margin_minutes, smk.resources.get("slurm_extra"))
    if refused:
        raise ValueError("; change ".join(refused))
    tokenizer_dir = Path(smk.input[0]) / "tokenizer"
    if launch.in_process:
        job = PretrainJob(
            smk.input[0],
            smk.params.languages,
            smk.output.model,
            smk.params.work_dir,
            smk.output.curve,
            smk.output.summary,
            settings,
            tokenizer_dir=tokenizer_dir,
            figure=smk.output.figure,
            figure_title=smk.params.title,
        )
        # The attempt's resume time counts from this job's process start (its imports too).
        summary = pretrain(job, started=process_start_time())
    else:
        summary = run_distributed(smk, launch, settings, tokenizer_dir)
    print({k: summary[k] for k in sorted(summary) if not isinstance(summary[k], dict | list)})


def run_distributed(smk, launch, settings, tokenizer_dir):
    """torchrun (through srun on several nodes); its output goes to the rule's log."""
    import json
    import sys
    from pathlib import Path

    from xling.cluster import run_torchrun

    module_args = [
        "--data-dir", smk.input[0], "--languages", *smk.params.languages,
        "--out-model", smk.output.model, "--work-dir", smk.params.work_dir,
        "--curve", smk.output.curve, "--summary", smk.output.summary,
        "--figure", smk.output.figure, "--figure-title", smk.params.title,
        "--tokenizer-dir", str(tokenizer_dir), "--settings-json", json.dumps(settings.to_dict()),
    ]  # fmt: skip
    cpus = smk.resources.get("cpus_per_task") or smk.threads
    run_torchrun(launch, module_args, cpus_per_node=cpus, output=sys.stdout)
    return json.loads(Path(smk.output.summary).read_text(encoding="utf-8"))


_bootstrap.run(main, snakemake)
