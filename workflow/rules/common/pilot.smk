# Paths and input functions of the pilot (rules: pilot.smk): one fine-tuning run per task of the
# pilot's model, and one Muller et al. run with RANDOM-INIT of its first layer group.

from xling.cluster.pilot import PilotSettings

PILOT = PilotSettings.from_config(config)


def _pilot_points():
    """(task, grid point) of each task's first grid point (the pilot's config has one)."""
    return [(task, next(iter(T1.grids[task]))) for task in TASKS]


def pilot_finetune_metrics():
    return [
        f"{finetune_run_dir(PILOT.pair, PILOT.variant, task, hp)}/metrics.json"
        for task, hp in _pilot_points()
    ]


def pilot_finetune_logs():
    return {
        task: f"{R}/logs/finetune/{PILOT.pair}_{PILOT.variant}_{task}_{hp}.log"
        for task, hp in _pilot_points()
    }


def _pilot_muller_run():
    """The first setup of its own runs, and its first job with RANDOM-INIT (not the reference)."""
    setup = next(s for s in MULLER.setups if not s.runs_of and s.experiment == "transfer")
    jobs = MULLER.jobs(setup)
    job = next((j for j in jobs if not j.startswith(setup.groups[0] + "/")), jobs[0])
    return setup, job


def pilot_muller_job():
    setup, job = _pilot_muller_run()
    return muller_job_file(setup.key, job)


def pilot_muller_log():
    setup, job = _pilot_muller_run()
    return {
        f"muller_{setup.task}": f"{R}/logs/muller/finetune/{setup.experiment}_{setup.task}_{setup.source}_"
        f"{job}.log"
    }


def get_pilot_targets(wildcards):
    """The pilot's report; called only when the target is asked for, so that other studies
    parse without a `pilot` section."""
    if PILOT is None:
        raise ValueError(
            "the pilot target needs the pilot's config over the study's: snakemake --profile "
            "slurm pilot --configfile config/config.yaml config/pilot.yaml"
        )
    return list(rules.pilot_report.output)
