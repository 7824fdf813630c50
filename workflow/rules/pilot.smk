# The pilot (config/pilot.yaml; docs/cluster.md, step 4): one bilingual model at the paper's shape
# over three attempts, one fine-tuning grid point per task, Wu section 5.2's CKA and one Muller et
# al. run, on the user's own cluster; its report measures them and forecasts the study from them.

if PILOT:

    rule pilot_report:
        input:
            pretrain=expand(
                rules.pretrain_model.output.summary, pair=PILOT.pair, variant=PILOT.variant
            ),
            finetune=pilot_finetune_metrics(),
            cka=expand(rules.cka.output[0], pair=PILOT.pair, variant=PILOT.variant),
            muller=pilot_muller_job(),
        output:
            markdown=f"{R}/pilot/report.md",
            html=report(
                f"{R}/pilot/report.html",
                caption="../report/pilot.rst",
                category="Pilot",
                labels={"artefact": "pilot report", "format": "html"},
            ),
        log:
            f"{R}/logs/pilot/report.log",
        localrule: True
        params:
            finetune_logs=pilot_finetune_logs(),
            muller_log=pilot_muller_log(),
            forecast=PILOT.forecast,
        script:
            "../scripts/pilot_report.py"
