"""The build's Cython step (``tools/cythonize.py``): one interpreter writes, byte for byte, the C that
one ``cython`` command per module writes, and refuses a file list it cannot pair."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "cythonize.py"
PYX = sorted((ROOT / "python" / "spatialobs").rglob("*.pyx"))


def test_an_odd_file_list_is_refused(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(TOOL), str(PYX[0])], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip().endswith(
        f"error: the files come in pairs (PYX C_FILE), got an odd number: {PYX[0]}"
    )


def test_a_bad_source_fails_the_run(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pyx"
    bad.write_text("def f(:\n")
    out = subprocess.run([sys.executable, str(TOOL), str(bad), str(tmp_path / "bad.c")], capture_output=True,
                         text=True, cwd=tmp_path)
    assert out.returncode == 1
    assert "bad.pyx:1:6: Expected ')', found ':'" in out.stderr
    assert not (tmp_path / "bad.c").exists()


@pytest.mark.timeout(300)
def test_the_same_c_as_one_cython_command_per_module(tmp_path: Path) -> None:
    pytest.importorskip("Cython", minversion="3.1")
    # two modules of different subpackages and the shared utility module, as CMakeLists.txt runs them
    pyx = [p for p in PYX if p.stem in ("_cmodel", "_cjson")]
    assert len(pyx) == 2
    one, each = tmp_path / "one", tmp_path / "each"
    pairs = [str(x) for p in pyx for x in (p, one / f"{p.stem}.c")]
    subprocess.run([sys.executable, str(TOOL), "--generate-shared", str(one / "_cyutility.c"),
                    "--shared", "spatialobs._cyutility", *pairs], check=True, cwd=tmp_path)
    each.mkdir()
    subprocess.run([sys.executable, "-m", "cython", "-3", f"--generate-shared={each / '_cyutility.c'}"], check=True,
                   cwd=tmp_path)
    for p in pyx:
        subprocess.run([sys.executable, "-m", "cython", "-3", "--fast-fail", "--shared=spatialobs._cyutility", str(p),
                        "-o", str(each / f"{p.stem}.c")], check=True, cwd=tmp_path)
    for name in ["_cyutility.c", *(f"{p.stem}.c" for p in pyx)]:
        a, b = (one / name).read_bytes(), (each / name).read_bytes()
        assert a.replace(bytes(one), b"OUT") == b.replace(bytes(each), b"OUT"), name
