"""The signals that ask a training job to stop, a scope that handles them, and a trainer's request
to stop: a signal came, or its SLURM time limit is near.

SLURM sends ``SIGTERM`` before it kills a job (the profile's early ``--signal=TERM@600``,
``scancel``, preemption); ``SIGUSR1`` is for a ``--signal=USR1@...`` of the user's own. Shared by
the trainer, which checkpoints and exits, and the job script that waits for torchrun, which must
outlive it. A trainer also stops on its own a margin before the job's end
(:mod:`xling.jobs.deadline`), so that no signal has to reach it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator

STOP_SIGNALS = (signal.SIGTERM, signal.SIGUSR1)


@contextlib.contextmanager
def stop_signals_handled(handler: Callable) -> Iterator[None]:
    """Within: ``handler(signum, frame)`` for every stop signal; the previous handlers after.

    Python lets only the main thread set handlers; elsewhere (a trainer run from a worker thread)
    the signals keep theirs.
    """
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


class StopRequest:
    """``with StopRequest(stop_at) as stop:`` notes the stop signals that come within (their
    number in :attr:`signal`, when the first came in :attr:`signal_time`); :attr:`out_of_time`
    says whether ``stop_at`` (seconds since the epoch; None: never) has passed. The trainer checks
    both between its steps."""

    def __init__(self, stop_at: float | None = None, clock: Callable[[], float] = time.time):
        self.signal: int | None = None
        self.signal_time: float | None = None  # when the first signal came (``clock``'s time)
        self.stop_at, self.clock = stop_at, clock
        self._scope = stop_signals_handled(self._handle)

    def _handle(self, signum, frame) -> None:
        self.signal = signum
        if self.signal_time is None:
            self.signal_time = self.clock()

    @property
    def out_of_time(self) -> bool:
        return self.stop_at is not None and self.clock() >= self.stop_at

    def __enter__(self) -> StopRequest:
        self._scope.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._scope.__exit__(*exc)
