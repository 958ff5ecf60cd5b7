"""A session whose owner is killed (SIGKILL: no close, no atexit) leaves the AT-SPI bus launcher's
``dbus-daemon`` running, a grandchild the parent-death signal does not reach; the next session's
start reaps it and the folder (``reap_orphans``). Real Xvfb, D-Bus and AT-SPI bus launcher."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from spatialobs.screen.drivers import _session as S
from tests._drivers import require, session_processes, wait_for

OWNER = """
import sys, time
from spatialobs.screen.drivers._session import Session
s = Session(320, 240)
s.a11y_address()
print(s.tmp, flush=True)
time.sleep(120)
"""


def _needs_a_session() -> None:
    missing = S.missing_programs(())
    require(f"missing system programs: {', '.join(missing)}" if missing else None)


def test_a_killed_owners_session_is_reaped_by_the_next_start(tmp_path):
    _needs_a_session()
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    with subprocess.Popen([sys.executable, "-c", OWNER], stdout=subprocess.PIPE, env=env, text=True) as owner:
        try:
            folder = owner.stdout.readline().strip()  # type: ignore[union-attr]
            assert folder.startswith(str(tmp_path)) and os.path.isfile(os.path.join(folder, "owner"))
        finally:
            owner.send_signal(signal.SIGKILL)
            owner.wait(timeout=10)
    # what the kill left: the accessibility bus's daemon (the direct children die with the owner)
    left = wait_for(lambda: [c for c in session_processes(folder + os.sep) if "dbus-daemon" in c], "the orphaned bus")
    assert any("accessibility.conf" in c for c in left), left
    assert os.path.isdir(folder)
    assert S.reap_orphans(str(tmp_path)) == 1
    wait_for(lambda: not session_processes(folder + os.sep), "the orphans to be gone", timeout=10)
    assert not os.path.exists(folder)
    assert S.reap_orphans(str(tmp_path)) == 0


def test_a_live_session_and_folders_without_an_owner_are_left_alone(tmp_path, monkeypatch):
    _needs_a_session()
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(S.tempfile, "tempdir", None)  # (re-read TMPDIR)
    half = tmp_path / "spatialobs-session-half"
    half.mkdir()
    gone = tmp_path / "spatialobs-session-gone"
    gone.mkdir()
    (gone / "owner").write_text("999999999 1\n", encoding="ascii")  # no such process
    s = S.Session(320, 240)
    try:
        assert s.tmp.startswith(str(tmp_path))
        assert not gone.exists() and half.is_dir()  # the start reaped the dead owner's folder only
        assert S.reap_orphans(str(tmp_path)) == 0  # this process owns the live one
        assert s.a11y_address().startswith("unix:")
    finally:
        s.close()
    assert not os.path.exists(s.tmp) and half.is_dir()


def test_reaping_an_empty_or_missing_folder_is_nothing(tmp_path):
    assert S.reap_orphans(str(tmp_path)) == 0
    assert S.reap_orphans(str(tmp_path / "absent")) == 0
    (tmp_path / "spatialobs-session-bad").mkdir()
    (tmp_path / "spatialobs-session-bad" / "owner").write_text("not a pid\n", encoding="ascii")
    assert S.reap_orphans(str(tmp_path)) == 0 and (tmp_path / "spatialobs-session-bad").is_dir()
