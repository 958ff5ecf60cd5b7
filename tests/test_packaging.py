"""Packaging: one version everywhere, compiled modules for any x86-64, and the wheel as a user
without a compiler installs it (``tools/wheel-smoke.sh``, run when ``SPATIALOBS_WHEEL`` names a
built wheel)."""

from __future__ import annotations

import logging
import os
import platform
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import spatialobs

ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger(__name__)

#: An AVX or AVX-512 instruction in objdump's AT&T listing: a 256- or 512-bit register, an
#: AVX-512 mask register, or a VEX-encoded (v-prefixed) instruction on 128-bit registers.
AVX_INSTRUCTION = re.compile(r"%[yz]mm\d|%k[1-7]\b|^\s*[0-9a-f]+:\s+v[a-z0-9]+\s.*%xmm", re.MULTILINE)


def project_version() -> str:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    m = re.search(r'^\[project\]$.*?^version = "([^"]+)"$', text, re.MULTILINE | re.DOTALL)
    assert m, "pyproject.toml has no [project] version"
    return m.group(1)


def avx_lines(library: Path) -> list[str]:
    """The disassembled lines of ``library`` that use AVX (any of its forms)."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(library)], capture_output=True,
                         text=True, check=True, timeout=120).stdout
    return [m.group(0).strip() for m in AVX_INSTRUCTION.finditer(out)]


def test_the_version_has_one_place():
    version = project_version()
    assert spatialobs.__version__ == version, (
        f"spatialobs.__version__ is {spatialobs.__version__!r} but pyproject.toml says {version!r}: "
        "the compiled core is older than pyproject.toml (rebuild it)")
    assert spatialobs._core.__version__ == spatialobs.__version__


def test_the_changelog_has_the_version():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\]", text, re.MULTILINE)
    assert headings[0] == "Unreleased"
    assert project_version() in headings


def test_cli_version_prints_the_version():
    out = subprocess.run([sys.executable, "-m", "spatialobs", "--version"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"spatialobs {spatialobs.__version__}"


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="an x86-64 check")
@pytest.mark.skipif(shutil.which("objdump") is None, reason="objdump (binutils) is not installed")
def test_compiled_modules_run_on_any_x86_64():
    """The core and the Cython modules use SSE2 at most (the x86-64 baseline): no AVX anywhere,
    since nothing in them chooses an instruction set at run time."""
    here = Path(spatialobs.__file__).parent
    libraries = sorted(here.rglob("*.so")) + sorted(here.rglob("*.pyd"))
    assert any(p.name.startswith("_core.") for p in libraries), f"no compiled core under {here}"
    found = {p.name: avx_lines(p)[:3] for p in libraries if avx_lines(p)}
    assert not found, f"AVX instructions in the compiled modules (built with -march or -mavx?): {found}"


@pytest.mark.skipif(platform.machine() != "x86_64", reason="an x86-64 check")
@pytest.mark.skipif(shutil.which("objdump") is None or shutil.which("gcc") is None,
                    reason="objdump and gcc are needed to check the check")
def test_the_avx_check_finds_avx(tmp_path):
    src = tmp_path / "add.c"
    src.write_text("void add(double *restrict a, const double *restrict b, int n) {\n"
                   "  for (int i = 0; i < n; i++) a[i] += b[i];\n}\n")
    for flags, expect in ((["-mavx2"], True), ([], False)):
        obj = tmp_path / f"add{len(flags)}.o"
        subprocess.run(["gcc", "-O3", *flags, "-c", str(src), "-o", str(obj)], check=True, timeout=60)
        assert bool(avx_lines(obj)) is expect, flags


def test_wheel_smoke_refuses_a_missing_wheel(tmp_path):
    for args in ([], [str(tmp_path / "nothing.whl")]):
        out = subprocess.run(["bash", str(ROOT / "tools" / "wheel-smoke.sh"), *args], capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 2
        assert out.stderr.strip() == "usage: tools/wheel-smoke.sh WHEEL (a spatialobs .whl file)"


def test_build_wheels_refuses_a_bad_interpreter(tmp_path):
    bad = tmp_path / "python3.99"
    out = subprocess.run(["bash", str(ROOT / "tools" / "build-wheels.sh"), "-o", str(tmp_path / "dist"), str(bad)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip() == f"build-wheels: {bad} is not a working Python 3.9 or newer"
    out = subprocess.run(["bash", str(ROOT / "tools" / "build-wheels.sh"), "-x"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2
    assert "usage: tools/build-wheels.sh [-o OUT_DIR] [PYTHON...]" in out.stderr


def given_wheel() -> Path:
    wheel = os.environ.get("SPATIALOBS_WHEEL")
    if not wheel:
        pytest.skip("set SPATIALOBS_WHEEL to a built wheel (tools/build-wheels.sh) to check it")
    path = Path(wheel)
    assert path.is_file(), f"SPATIALOBS_WHEEL={wheel} is not a file"
    return path


def test_wheel_holds_the_package():
    wheel = given_wheel()
    names = zipfile.ZipFile(wheel).namelist()
    ext = ".pyd" if "win" in wheel.name else ".so"
    modules = ["spatialobs/_core"] + [str(p.relative_to(ROOT / "python").with_suffix(""))
                                      for p in sorted((ROOT / "python" / "spatialobs").rglob("*.pyx"))]
    for mod in modules:
        assert any(n.startswith(mod + ".") and n.endswith(ext) for n in names), f"{mod} is not in {wheel.name}"
    for name in ("spatialobs/py.typed", "spatialobs/_core.pyi", "spatialobs/cli.py"):
        assert name in names, f"{name} is not in {wheel.name}"
    if shutil.which("node") and shutil.which("npm"):
        assert "spatialobs/serve/live_page/live.html" in names, f"{wheel.name} has no live page"


@pytest.mark.timeout(900)  # installs the package and the serve extra into a new environment
def test_wheel_installs_and_runs_without_a_compiler():
    wheel = given_wheel()
    env = dict(os.environ, PYTHON=sys.executable)
    if not (shutil.which("node") and shutil.which("npm")):
        env["SPATIALOBS_SMOKE_LIVE"] = "0"
    out = subprocess.run(["bash", str(ROOT / "tools" / "wheel-smoke.sh"), str(wheel)], capture_output=True,
                         text=True, timeout=840, env=env)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    for line in out.stdout.splitlines():
        if line.startswith("wheel-smoke:"):
            log.info(line)  # the install and demo times in the run's log
    assert "wheel-smoke: passed" in out.stdout
    seconds = float(re.search(r"install [\d.]+ s \+ demo [\d.]+ s = ([\d.]+) s", out.stdout).group(1))
    assert seconds < 120, f"install and demo took {seconds} s (the target is under a minute)"
