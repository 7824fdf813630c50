"""``python -m xling.report.claims results/demo``: check a finished run's claims."""

from xling.report.claims import main

raise SystemExit(main())
