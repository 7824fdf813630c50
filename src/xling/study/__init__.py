"""The study: the Snakefile's one front door. Torch-free and cheap, since every cluster job
parses the Snakefile again.

Layered bottom to top: :mod:`.keys` (the error and the settings several stages read),
:mod:`.schema` (config/schema.yaml), :mod:`.plan` (what Table 1, Wu section 5 and Muller et al.
build), :mod:`.checks` (one module per stage) and :mod:`.validate` on top::

    config = study.validate(config)   # or study.load(path)
    plan = study.plan(config)         # plan.table1, plan.section5, plan.muller
"""

from xling.study.keys import ConfigError
from xling.study.plan import StudyPlan, plan
from xling.study.schema import DEFAULT_SCHEMA, load_yaml
from xling.study.validate import check_files, load, main, validate

__all__ = [
    "DEFAULT_SCHEMA",
    "ConfigError",
    "StudyPlan",
    "check_files",
    "load",
    "load_yaml",
    "main",
    "plan",
    "validate",
]
