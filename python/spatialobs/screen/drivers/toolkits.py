"""What each GUI toolkit needs to show its widgets on the AT-SPI accessibility bus.

An application reaches the bus through its toolkit's *bridge*:

* **GTK 2** loads it as a GTK module: ``GTK_MODULES=gail:atk-bridge``, and the module
  file ``gtk-2.0/modules/libatk-bridge.so`` must be installed (Debian:
  ``libatk-adaptor``); without it the application runs, logs
  ``Failed to load module "atk-bridge"`` and never appears on the bus;
* **GTK 3** links its bridge and starts it unless ``NO_AT_BRIDGE=1``;
* **GTK 4** has its own AT-SPI backend (``GTK_A11Y=atspi``, the default on X11);
* **Qt 5 and Qt 6** start their bridge only when the desktop says accessibility is
  on, or with ``QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1`` (``QT_ACCESSIBILITY=1`` for old
  versions);
* **Chromium and Electron** build their accessibility tree only with
  ``--force-renderer-accessibility`` on the command line (or
  ``ACCESSIBILITY_ENABLED=1``).

:data:`TOOLKIT_ENV` holds these settings; every desktop launch gets all of them (each
toolkit ignores the others'), and Chromium-based programs also get
:data:`TOOLKIT_ARGS`. :func:`detect_toolkit` tells the toolkit of a program from the
libraries it loads; :func:`bridge_problem` checks before a launch that the bridge is
installed; :data:`REGISTER_HINTS` is the one line a launch that never registers ends
with.

Examples
--------
>>> sorted(TOOLKIT_ENV)
['chromium', 'electron', 'gtk2', 'gtk3', 'gtk4', 'qt5', 'qt6']
>>> TOOLKIT_ENV["qt5"]["QT_LINUX_ACCESSIBILITY_ALWAYS_ON"]
'1'
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from functools import lru_cache
from typing import Dict, Optional, Tuple

__all__ = ["TOOLKIT_ENV", "TOOLKIT_ARGS", "REGISTER_HINTS", "LABELS", "default_env", "detect_toolkit",
           "bridge_problem", "gtk2_bridge_paths", "BRIDGE_FAILED"]

#: The environment each toolkit's accessibility bridge needs.
TOOLKIT_ENV: Dict[str, Dict[str, str]] = {
    "gtk2": {"GTK_MODULES": "gail:atk-bridge"},
    "gtk3": {},
    "gtk4": {"GTK_A11Y": "atspi"},
    "qt5": {"QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1", "QT_ACCESSIBILITY": "1"},
    "qt6": {"QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1", "QT_ACCESSIBILITY": "1"},
    "electron": {"ACCESSIBILITY_ENABLED": "1"},
    "chromium": {"ACCESSIBILITY_ENABLED": "1"},
}

#: Command-line arguments appended for each toolkit.
TOOLKIT_ARGS: Dict[str, Tuple[str, ...]] = {
    "electron": ("--force-renderer-accessibility",),
    "chromium": ("--force-renderer-accessibility",),
}

#: How each toolkit is named in messages.
LABELS = {"gtk2": "GTK 2", "gtk3": "GTK 3", "gtk4": "GTK 4", "qt5": "Qt 5", "qt6": "Qt 6", "electron": "Electron",
          "chromium": "Chromium", "auto": "an unknown toolkit"}

#: What to check when an application of each toolkit never registers on the accessibility bus.
REGISTER_HINTS: Dict[str, str] = {
    "gtk2": "a GTK 2 application loads its bridge only as a module: check GTK_MODULES=gail:atk-bridge and that "
            "libatk-bridge.so is in gtk-2.0/modules (Debian: apt-get install libatk-adaptor)",
    "gtk3": "a GTK 3 application starts its bridge unless NO_AT_BRIDGE=1: check the spec's env",
    "gtk4": "a GTK 4 application needs GTK_A11Y=atspi (or unset): check the spec's env",
    "qt5": "a Qt application registers only with QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1 (set by default): check the "
           "spec's env",
    "qt6": "a Qt application registers only with QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1 (set by default): check the "
           "spec's env",
    "electron": "an Electron application builds its accessibility tree only with --force-renderer-accessibility "
                "(added by default): check the command",
    "chromium": "Chromium builds its accessibility tree only with --force-renderer-accessibility (added by "
                "default): check the command",
    "auto": "its toolkit is unknown: set toolkit = \"gtk2\", \"gtk3\", \"gtk4\", \"qt5\", \"qt6\" or \"electron\" in "
            "the spec so that its accessibility setting can be checked",
}

#: What GTK writes to the log when a module named in GTK_MODULES cannot be loaded.
BRIDGE_FAILED = 'Failed to load module "atk-bridge"'

#: Library name prefixes that tell a toolkit, most specific first.
_LIBRARIES = (("libgtk-4.so", "gtk4"), ("libgtk-3.so", "gtk3"), ("libgtk-x11-2.0.so", "gtk2"),
              ("libQt6Gui.so", "qt6"), ("libQt5Gui.so", "qt5"))


def default_env() -> Dict[str, str]:
    """Every toolkit's settings in one environment (each toolkit ignores the others').

    Examples
    --------
    >>> env = default_env()
    >>> env["GTK_MODULES"], env["QT_LINUX_ACCESSIBILITY_ALWAYS_ON"]
    ('gail:atk-bridge', '1')
    """
    out: Dict[str, str] = {}
    for env in TOOLKIT_ENV.values():
        out.update(env)
    return out


@lru_cache(maxsize=256)
def _libraries(path: str) -> Tuple[str, ...]:
    # The shared libraries a program loads, as ldd resolves them ("" for a script or when ldd fails).
    try:
        out = subprocess.run(["ldd", path], capture_output=True, text=True, timeout=10, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ()
    libs = []
    for line in out.splitlines():
        parts = line.split("=>")
        if len(parts) == 2 and parts[1].strip().startswith("/"):
            libs.append(parts[1].split("(")[0].strip())
    return tuple(libs)


def detect_toolkit(program: str) -> str:
    """The toolkit of ``program`` (a name on PATH or a path) from the libraries it loads, or ``"auto"``.

    A shell script (LibreOffice's ``localc``) or a program that loads its toolkit later
    is ``"auto"``: name the toolkit in the spec. Chromium and Electron are told by
    their name or by the ``resources/`` folder an Electron application ships beside
    its program.

    Examples
    --------
    >>> detect_toolkit("sh")
    'auto'
    """
    path = shutil.which(program) or program
    real = os.path.realpath(path)
    base = os.path.basename(real).lower()
    if base in ("chromium", "chromium-browser", "chrome", "google-chrome"):
        return "chromium"
    if os.path.exists(os.path.join(os.path.dirname(real), "resources", "app.asar")):
        return "electron"
    for lib in _libraries(real):
        name = os.path.basename(lib)
        for prefix, kit in _LIBRARIES:
            if name.startswith(prefix):
                return kit
    return "auto"


def gtk2_bridge_paths() -> Tuple[str, ...]:
    """Where GTK 2 looks for its accessibility bridge module (the installed ones exist).

    Examples
    --------
    >>> all(p.endswith("libatk-bridge.so") for p in gtk2_bridge_paths())
    True
    """
    dirs = [d for d in os.environ.get("GTK_PATH", "").split(":") if d]
    dirs += sorted(glob.glob("/usr/lib/*/gtk-2.0")) + ["/usr/lib64/gtk-2.0", "/usr/lib/gtk-2.0"]
    return tuple(os.path.join(d, "modules", "libatk-bridge.so") for d in dirs)


def bridge_problem(toolkit: str) -> Optional[str]:
    """Why an application of ``toolkit`` cannot reach the accessibility bus here (a missing bridge), or None.

    Examples
    --------
    >>> bridge_problem("qt5") is None
    True
    """
    if toolkit == "gtk2" and not any(os.path.exists(p) for p in gtk2_bridge_paths()):
        where = next((p for p in gtk2_bridge_paths() if os.path.isdir(os.path.dirname(os.path.dirname(p)))),
                     "gtk-2.0/modules/libatk-bridge.so")
        return (f"the GTK 2 accessibility bridge is not installed ({where} is missing): a GTK 2 application would "
                "never appear on the accessibility bus (Debian: apt-get install libatk-adaptor)")
    return None
