"""The life of a job, written once for every trainer (:mod:`xling.jobs.lifecycle`): one trainer
per work directory, its log over all attempts, the stop signals, what every checkpoint does alike,
the record of a finished run and the restorable outputs of a finished training."""
