"""The checks of a study config that a JSON schema cannot express, one module per stage: where
the data comes from (:mod:`.sources`), which datasets each task reads (:mod:`.datasets`), Table 1's
rows and grids (:mod:`.table1`), the training settings (:mod:`.training`), Wu section 5
(:mod:`.section5`) and Muller et al. (:mod:`.muller`). :func:`xling.study.validate` runs them in
that order. Each failure is one :class:`~xling.study.keys.ConfigError` naming the key, what was
found and the fix, so that a config that cannot run stops before any job does.
"""
