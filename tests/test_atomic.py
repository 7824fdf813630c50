"""Atomic writes after a kill: the half-written part stays hidden and the next write of the same
path removes it, never a part of another path; and what a rename publishes is on disk before it."""

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


def record_syncs_and_renames(monkeypatch) -> list[tuple[str, object]]:
    """("fsync", inode) for every os.fsync and ("rename", target) for every os.replace, in order."""
    events = []
    fsync, replace = os.fsync, os.replace

    def recorded_fsync(fd):
        events.append(("fsync", os.fstat(fd).st_ino))
        fsync(fd)

    def recorded_replace(source, target):
        events.append(("rename", str(target)))
        replace(source, target)

    monkeypatch.setattr(os, "fsync", recorded_fsync)
    monkeypatch.setattr(os, "replace", recorded_replace)
    return events


def test_a_directory_is_on_disk_before_its_rename_and_the_rename_after(tmp_path, monkeypatch):
    """Every file (and folder) built is fsynced before the rename that publishes it, and the
    parent folder after: a crash then leaves the old version or the new one, never a best model
    whose files were still in the page cache."""
    target = tmp_path / "best-step10"
    target.mkdir()
    (target / "old").write_text("the previous version")
    events = record_syncs_and_renames(monkeypatch)
    with atomic_directory(target) as building:
        (building / "model.safetensors").write_bytes(b"weights")
        (building / "tokenizer").mkdir()
        (building / "tokenizer" / "vocab.txt").write_text("a\nb\n")
        built = {path.stat().st_ino for path in [building, *building.rglob("*")]}
    published = events.index(("rename", str(target)))
    synced_before = {inode for kind, inode in events[:published] if kind == "fsync"}
    assert built <= synced_before, "a file or folder not on disk before the rename"
    assert ("fsync", tmp_path.stat().st_ino) in events[published:], "the rename not on disk"
    names = sorted(path.name for path in target.rglob("*"))
    assert names == ["model.safetensors", "tokenizer", "vocab.txt"]
    assert hidden(tmp_path) == [], "the previous version is deleted once the new one is in place"


def test_a_file_is_on_disk_before_its_rename_and_the_rename_after(tmp_path, monkeypatch):
    events = record_syncs_and_renames(monkeypatch)
    with atomic_open(tmp_path / "summary.json") as handle:
        handle.write("{}")
    written = (tmp_path / "summary.json").stat().st_ino
    target = str(tmp_path / "summary.json")
    assert events == [("fsync", written), ("rename", target), ("fsync", tmp_path.stat().st_ino)]
