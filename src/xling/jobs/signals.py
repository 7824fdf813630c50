"""The signals that ask a training job to stop, and a scope that handles them.

SLURM sends ``SIGTERM`` before it kills a job (the profile's early ``--signal=TERM@600``,
``scancel``, preemption); ``SIGUSR1`` is for a ``--signal=USR1@...`` of the user's own. Shared by
the trainer, which checkpoints and exits, and the job script that waits for torchrun, which must
outlive it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
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
