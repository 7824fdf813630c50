"""``python -m xling.study CONFIG.yaml [MORE.yaml ...]``: validate config files as the workflow
would."""

import sys

from xling.study.validate import main

sys.exit(main(sys.argv[1:]))
