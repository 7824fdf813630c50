"""Atomic writes after a kill: the half-written part stays hidden and the next write of the same
path removes it, never a part of another path."""

import os
import signal
import subprocess
import sys
import textwrap

from xling.base.atomic import atomic_directory, atomic_open

# A writer that is SIGKILLed mid-file: no Python cleanup runs, as after SLURM's kill.
WRITER = textwrap.dedent(
    """
    import os, signal, sys
    from xling.base.atomic import atomic_directory, atomic_open

    with atomic_open(sys.argv[1]) as handle:
        handle.write("half")
        handle.flush()
        with atomic_directory(sys.argv[2]) as folder:
            (folder / "x").write_text("half")
            os.kill(os.getpid(), signal.SIGKILL)
    """
)


def hidden(folder):
    return sorted(name for name in os.listdir(folder) if name.startswith("."))


def test_a_killed_write_leaves_a_hidden_part_that_the_next_write_removes(tmp_path):
    path, folder = tmp_path / "out.txt", tmp_path / "vocab"
    done = subprocess.run([sys.executable, "-c", WRITER, str(path), str(folder)], timeout=120)
    assert done.returncode == -signal.SIGKILL
    assert not path.exists() and not folder.exists()
    assert len(hidden(tmp_path)) == 2  # .out.txt.<random>.part and .vocab.<random>.part
    other = tmp_path / ".out.txt.old.abcdefgh.part"  # a part of another path, "out.txt.old"
    other.write_text("another job's")
    with atomic_open(path) as handle:
        handle.write("whole")
    with atomic_directory(folder) as building:
        (building / "x").write_text("whole")
    assert path.read_text() == "whole" and (folder / "x").read_text() == "whole"
    assert hidden(tmp_path) == [other.name]
