"""`write_atomic`: unpredictable O_EXCL temp names, permissions set before the data lands."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from trt_edge_runner.agent.durable import replace_symlink, write_atomic


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


def test_replace_symlink_uses_fresh_names(tmp_path: Path) -> None:
    link = tmp_path / "current"
    squatter = tmp_path / f".current.tmp-{os.getpid()}"
    squatter.write_text("not ours")
    replace_symlink(link, "slots/A")
    replace_symlink(link, "slots/B")
    assert os.readlink(link) == "slots/B"
    assert squatter.read_text() == "not ours"  # the old code deleted whatever had that name
