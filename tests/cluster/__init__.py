"""Helpers of the cluster and environment tests: the workflow's rules, the imports of their
scripts, the SLURM profile, and a real single-node SLURM cluster started from Debian packages."""
