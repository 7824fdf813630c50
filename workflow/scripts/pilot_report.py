"""Adapter: the pilot report (xling.cluster.pilot) from the pilot's jobs and the study's plan."""

import _bootstrap


def main(smk):
    from xling.cluster.pilot import write_report

    write_report(
        pretrain_summary=smk.input.pretrain[0],
        run_logs={**smk.params.finetune_logs, **smk.params.muller_log},
        study=smk.params.forecast,
        markdown=smk.output.markdown,
        html_file=smk.output.html,
    )


_bootstrap.run(main, snakemake)
