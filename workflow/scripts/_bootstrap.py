"""Plumbing shared by the script adapters: import path and log redirection.

Rules may run in a per-rule conda env where `xling` is not installed, so the repository's src/ is
put first on sys.path. Everything a job prints goes to the rule's log file.
"""

import contextlib
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))


def run(main, snakemake):
    """Call ``main(snakemake)`` with stdout and stderr appended to the rule's first log file.

    A job that asked for GPUs stops first, naming the setting to change, where torch cannot see
    them or has no kernels for them (xling.cluster.gpus); otherwise its log says what it checked.
    """
    from xling.cluster.gpus import require_visible_gpus

    def checked_main():
        checked = require_visible_gpus(dict(snakemake.resources.items()))
        if checked:
            print(checked, flush=True)
        main(snakemake)

    log_path = Path(snakemake.log[0]) if snakemake.log else None
    if log_path is None:
        checked_main()
        return
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with (
        open(log_path, "a", encoding="utf-8", buffering=1) as log,
        contextlib.redirect_stdout(log),
        contextlib.redirect_stderr(log),
    ):
        try:
            checked_main()
        except Exception:
            traceback.print_exc()
            raise
