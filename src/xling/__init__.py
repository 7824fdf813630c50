"""xling: the logic of the cross-lingual transfer reproduction workflow.

Every stage of the Snakemake workflow calls into this package; nothing here imports Snakemake.
"""

__version__ = "0.1.0"
