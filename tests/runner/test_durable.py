"""`trt_edge_runner.durable`: whole-file replacement, safe temp names, streaming, the probe."""

from __future__ import annotations

import mmap
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import tracemalloc
from pathlib import Path

import pytest
from trt_edge_runner.durable import (
    Unwritable,
    atomic_file,
    make_writable_dir,
    replace_symlink,
    unwritable,
    write_atomic,
    write_atomic_chunks,
)

DEVICE_RUNNER = Path(__file__).resolve().parents[2] / "device_runner"
NOBODY = 65534


def test_planted_symlink_at_a_guessable_temp_name_is_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep me")
    key = tmp_path / "signing.key"
    # The old writer used `.NAME.tmp-PID` and opened it with O_TRUNC, following links.
    planted = tmp_path / f".{key.name}.tmp-{os.getpid()}"
    planted.symlink_to(victim)
    write_atomic(key, b"SECRET", mode=0o600)
    assert victim.read_bytes() == b"keep me"
    assert key.read_bytes() == b"SECRET" and not key.is_symlink()
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    leftovers = sorted(p.name for p in tmp_path.iterdir())
    assert leftovers == sorted(["victim", "signing.key", planted.name])


def test_a_symlink_planted_at_the_target_is_replaced_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep me")
    target = tmp_path / "report.json"
    target.symlink_to(victim)
    write_atomic_chunks(target, [b"new ", memoryview(b"content")])
    assert victim.read_bytes() == b"keep me"
    assert not target.is_symlink() and target.read_bytes() == b"new content"


def test_the_mode_is_exact_whatever_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0o077)
    try:
        write_atomic(tmp_path / "shared", b"x", mode=0o644)
        write_atomic(tmp_path / "launcher", b"#!/bin/sh\n", mode=0o755)
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "shared").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "launcher").stat().st_mode) == 0o755


def test_a_failing_writer_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "model.tar"
    target.write_bytes(b"the previous good tar")

    def chunks() -> object:
        yield b"half of the new "
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        write_atomic_chunks(target, chunks())  # type: ignore[arg-type]
    with pytest.raises(KeyboardInterrupt), atomic_file(target) as handle:
        handle.write(b"interrupted")
        raise KeyboardInterrupt
    assert target.read_bytes() == b"the previous good tar"
    assert [p.name for p in tmp_path.iterdir()] == ["model.tar"]


def test_a_killed_writer_leaves_the_old_file_whole(tmp_path: Path) -> None:
    """SIGKILL in the middle of a write: the target keeps its old bytes; only a `.tmp-` sibling
    (which the agent's recover() sweeps) is left. The child says when it is mid-write."""
    target = tmp_path / "state.json"
    target.write_bytes(b'{"old": true}')
    child = textwrap.dedent(
        f"""
        import sys, time
        from trt_edge_runner.durable import write_atomic_chunks

        def chunks():
            yield b'{{"new": '
            print("mid-write", flush=True)
            time.sleep(600)  # not a poll: the write held open until the test kills it
            yield b"true}}"

        write_atomic_chunks({str(target)!r}, chunks())
        """
    )
    env = {**os.environ, "PYTHONPATH": str(DEVICE_RUNNER)}
    proc = subprocess.Popen(
        [sys.executable, "-c", child], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "mid-write"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
        if proc.stdout is not None:
            proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    assert target.read_bytes() == b'{"old": true}'
    [leftover] = [p.name for p in tmp_path.iterdir() if p != target]
    assert leftover.startswith(".state.json.tmp-")


def test_chunks_are_streamed_without_a_copy(tmp_path: Path) -> None:
    """A 32 MiB memoryview over a memory-mapped file is written without a Python-side copy
    (what `inspect --extract-engines` relies on for multi-GB engines)."""
    size = 32 << 20
    source = tmp_path / "model.pte"
    with open(source, "wb") as out:
        out.truncate(size)
        out.seek(size // 2)
        out.write(b"engine")
    with open(source, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        view = memoryview(mapped)
        try:
            tracemalloc.start()
            write_atomic_chunks(tmp_path / "out.engine", [view[: size // 2], view[size // 2 :]])
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        finally:
            view.release()
    assert peak < size // 16, f"peak {peak} bytes: the payload was copied"
    assert (tmp_path / "out.engine").read_bytes() == source.read_bytes()


def test_replace_symlink_uses_fresh_names(tmp_path: Path) -> None:
    link = tmp_path / "current"
    squatter = tmp_path / f".current.tmp-{os.getpid()}"
    squatter.write_text("not ours")
    replace_symlink(link, "slots/A")
    replace_symlink(link, "slots/B")
    assert os.readlink(link) == "slots/B"
    assert squatter.read_text() == "not ours"  # the old code deleted whatever had that name


def test_unwritable_names_what_is_in_the_way_and_creates_nothing(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    a_dir = tmp_path / "dir"
    a_dir.mkdir()
    assert unwritable(tmp_path / "new" / "deeper" / "out.npz") is None
    assert unwritable(tmp_path / "new" / "deeper", directory=True) is None
    assert not (tmp_path / "new").exists()
    assert unwritable(a_dir) == Unwritable("is_directory", a_dir)
    assert unwritable(a_file, directory=True) == Unwritable("not_a_directory", a_file)
    assert unwritable(a_file / "sub" / "o.npz") == Unwritable("blocked", a_file)
    assert unwritable(a_file / "sub", directory=True) == Unwritable("blocked", a_file)
    assert Unwritable("blocked", a_file).describe() == f"{a_file} is not a directory"


_PERMISSION_CHECK = """
import os, sys
import durable  # the copy in the working directory
locked = sys.argv[1]
assert os.geteuid() != 0
found = durable.unwritable(os.path.join(locked, "x.tar"))
assert (found.reason, str(found.where)) == ("permission", locked), found
assert durable.make_writable_dir(os.path.join(locked, "sub")) == locked + " is not writable"
assert not os.path.exists(os.path.join(locked, "sub"))
print("checked")
"""


def test_unwritable_sees_a_read_only_directory() -> None:
    """Root may write anywhere, so under root (as in CI) the check runs as `nobody`, on a copy
    of the module in a directory `nobody` can read."""
    root = Path(tempfile.mkdtemp(prefix="trt-edge-durable-"))
    try:
        root.chmod(0o755)
        module = root / "durable.py"
        shutil.copy(DEVICE_RUNNER / "trt_edge_runner" / "durable.py", module)
        module.chmod(0o644)
        locked = root / "locked"
        locked.mkdir(mode=0o555)
        locked.chmod(0o555)
        as_root = os.geteuid() == 0
        interpreter = (
            shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
            if as_root
            else sys.executable
        )
        assert interpreter is not None, "no system python3 to run the check as nobody"
        done = subprocess.run(
            [interpreter, "-c", _PERMISSION_CHECK, str(locked)],
            capture_output=True,
            text=True,
            cwd=root,
            check=False,
            user=NOBODY if as_root else None,
            group=NOBODY if as_root else None,
        )
        assert done.returncode == 0 and done.stdout.strip() == "checked", done.stderr
    finally:
        (root / "locked").chmod(0o755)
        shutil.rmtree(root)


def test_make_writable_dir_creates_missing_parents(tmp_path: Path) -> None:
    assert make_writable_dir(tmp_path / "a" / "b") is None
    assert (tmp_path / "a" / "b").is_dir()
    (tmp_path / "f").write_text("x")
    assert make_writable_dir(tmp_path / "f" / "b") == f"{tmp_path / 'f'} is not a directory"
