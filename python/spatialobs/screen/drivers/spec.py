"""App specs: what an application is, how to launch it and what to explore it with, as data.

An :class:`AppSpec` describes one application for a real driver:

* a desktop application (``driver = "desktop"``, through AT-SPI): its ``command``
  (the program and its arguments), its ``toolkit`` (``"auto"`` by default: see
  :mod:`spatialobs.screen.drivers.toolkits`), extra ``env``, and the ``files``,
  ``folders`` and seeded folder ``tree`` laid out under each launch's fresh HOME;
* a web application (``driver = "web"``, in headless Chromium): its start ``url``
  (or a local folder to serve), the ``origins`` that belong to it (pages elsewhere
  are captures, not states) and optional ``login`` steps run after each launch;
* JupyterLab (``driver = "jupyterlab"``): a local server per launch, its root folder
  seeded with ``files``.

A web app or JupyterLab may also name the URL ``paths`` that are the application
(prefixes such as ``"/lab"``): a page of its own origin at another path, such as the
logout page no action leaves, is then a capture too (its ``meta.app`` is the app's
name and that path, ``"jupyterlab/logout"``), and the exploration relaunches.

Every spec also carries the exploration's data: the ``goal`` text of the heuristic
prior, the ``values`` typed into editable elements, the ``keys`` offered on every
screen, the ``settle`` delay after an action (0.15 s by default; 0.05 s for a web
app, whose pages are then also checked to have settled), the ``launch_timeout`` and
``register_timeout`` (how long an application whose window is up may take to
appear on the accessibility bus), and ``volatile`` rules: texts whose changes do not
change the state (:class:`VolatileRule`; the normalization of
:func:`~spatialobs.screen.normalize_text` stays the default).

Specs come from a TOML file (:func:`load_spec`; ``spatialobs explore --app-spec
FILE.toml``), from a command line (``"cmd:galculator --flag"``, :meth:`AppSpec.from_command`),
from a URL (``"web:http://127.0.0.1:8000/"``, :meth:`AppSpec.from_url`) or from
the specs shipped with the package (:func:`builtin_spec`: ``mousepad``,
``pcmanfm``, ``localc``, ``jupyterlab``, files in ``spatialobs/screen/apps/``).
Placeholders: ``{home}`` in the command and in ``env`` values is the launch's HOME.

A spec file (every key optional except ``command`` or ``url``)::

    name = "galculator"
    command = ["galculator"]          # or one string, split like a shell does
    toolkit = "gtk3"                  # auto, gtk2, gtk3, gtk4, qt5, qt6, electron, chromium
    goal = "add two numbers and clear the display"
    values = ["42"]
    keys = ["escape", "enter"]
    settle = 0.15
    launch_timeout = 20
    register_timeout = 5
    env = { LANG = "C.UTF-8" }
    folders = ["Documents"]
    files = { "notes.txt" = "hello" }
    [[volatile]]                      # the display's number does not change the state
    role = "text"
    pattern = "^.*$"
    replace = "<display>"

Examples
--------
>>> spec = AppSpec.from_command("galculator --flag")
>>> spec.name, spec.command, spec.driver
('galculator', ('galculator', '--flag'), 'desktop')
>>> AppSpec.from_dict({"command": "featherpad", "toolkit": "qt5"}).toolkit
'qt5'
>>> AppSpec.from_dict({"comand": "featherpad"})
Traceback (most recent call last):
...
spatialobs.screen.drivers.spec.SpecError: spec <dict>: unknown key 'comand' (did you mean 'command'?)
>>> sorted(BUILTIN_APPS)
['featherpad', 'galculator', 'jupyterlab', 'localc', 'loimpress', 'lomath', 'lowriter', 'mousepad', 'pcmanfm']
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import random
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union
from urllib.parse import urlsplit

from spatialobs._errors import InvalidInputError

__all__ = ["AppSpec", "VolatileRule", "SeedTree", "LoginStep", "SpecError", "load_spec", "builtin_spec",
           "BUILTIN_APPS", "DRIVERS", "TOOLKITS", "APPS_DIR", "apply_volatile"]

#: The drivers a spec can name.
DRIVERS = ("desktop", "web", "jupyterlab")
#: The toolkits a desktop spec can name (``auto``: detected from the program).
TOOLKITS = ("auto", "gtk2", "gtk3", "gtk4", "qt5", "qt6", "electron", "chromium")
#: The folder of the specs shipped with the package.
APPS_DIR = Path(__file__).resolve().parent.parent / "apps"
#: The shipped specs, by name.
BUILTIN_APPS = tuple(sorted(p.stem for p in APPS_DIR.glob("*.toml")))

_LOGIN_OPS = ("goto", "fill", "click", "press", "wait_for")


class SpecError(InvalidInputError):
    """An app spec is malformed: the message names the spec and the key."""


@dataclass(frozen=True)
class VolatileRule:
    """A text whose changes do not change the state: ``pattern`` (a regular expression) is replaced by ``replace``.

    With ``role``, only the texts of elements of that role (compared case-blind);
    without, every text. Rules apply in order, to the raw text as read, before the
    normalization of :func:`~spatialobs.screen.normalize_text`.

    Examples
    --------
    >>> r = VolatileRule(r"\\d+ items?", "<n> items")
    >>> r.apply("12 items selected", "label")
    '<n> items selected'
    >>> VolatileRule("^.*$", "<display>", role="text").apply("3.14", "push button")
    '3.14'
    """

    pattern: str
    replace: str = "*"
    role: Optional[str] = None
    _regex: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, str) or not self.pattern:
            raise SpecError(f"a volatile rule needs a non-empty pattern, got {self.pattern!r}")
        if not isinstance(self.replace, str):
            raise SpecError(f"a volatile rule's replace must be a string, got {self.replace!r}")
        if self.role is not None and not isinstance(self.role, str):
            raise SpecError(f"a volatile rule's role must be a string, got {self.role!r}")
        try:
            rx = re.compile(self.pattern)
        except re.error as e:
            raise SpecError(f"volatile pattern {self.pattern!r} is not a regular expression ({e})") from None
        object.__setattr__(self, "_regex", rx)

    def apply(self, text: str, role: str = "") -> str:
        """``text`` with the rule applied (unchanged when the role does not match)."""
        if self.role is not None and self.role.lower() != role.lower():
            return text
        return str(self._regex.sub(self.replace, text))


def apply_volatile(rules: Sequence[VolatileRule], text: Optional[str], role: str) -> Optional[str]:
    """``text`` after every rule, in order (None stays None; a text emptied by the rules becomes None).

    Examples
    --------
    >>> apply_volatile([VolatileRule(r"Free space: .*", "Free space")], "Free space: 3 GiB", "label")
    'Free space'
    """
    if not text or not rules:
        return text
    for r in rules:
        text = r.apply(text, role)
    return text or None


@dataclass(frozen=True)
class SeedTree:
    """A folder tree drawn from each launch's seeded random generator, under ``root`` (relative to HOME).

    ``shape[k]`` folders are drawn (names from ``folders``, without repetition) inside
    each folder of depth ``k``; every folder that has subfolders also gets
    ``files_per_folder`` files (names from ``files``), drawn after its subfolders'
    own draws. The same seed lays out the same tree.

    Examples
    --------
    >>> import tempfile
    >>> t = SeedTree("Files", ("A", "B", "C"), ("x.txt", "y.txt"), (2,), 1)
    >>> with tempfile.TemporaryDirectory() as home:
    ...     t.lay_out(home, random.Random(0))
    ...     sorted(os.listdir(os.path.join(home, "Files")))
    ['B', 'C', 'x.txt']
    """

    root: str
    folders: Tuple[str, ...]
    files: Tuple[str, ...]
    shape: Tuple[int, ...]
    files_per_folder: int = 0

    def lay_out(self, home: str, rng: random.Random) -> None:
        """Create the tree under ``home``."""
        top = _inside(home, self.root, "tree root")
        os.makedirs(top, exist_ok=True)
        self._fill(top, 0, rng)

    def _fill(self, folder: str, depth: int, rng: random.Random) -> None:
        if depth >= len(self.shape):
            return
        for name in sorted(rng.sample(self.folders, self.shape[depth])):
            sub = os.path.join(folder, name)
            os.makedirs(sub, exist_ok=True)
            self._fill(sub, depth + 1, rng)
        for name in sorted(rng.sample(self.files, self.files_per_folder)):
            with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
                f.write(name)


@dataclass(frozen=True)
class LoginStep:
    """One step of a web app's login, run after every launch: ``op`` on ``target`` (a Playwright selector).

    ``goto`` (``target`` a URL or a path), ``fill`` (type ``value`` into ``target``),
    ``click``, ``press`` (``target`` a key), ``wait_for`` (``target`` appears).
    """

    op: str
    target: str
    value: str = ""


_SPEC_KEYS = ("name", "driver", "command", "url", "toolkit", "env", "files", "folders", "tree", "settle",
              "launch_timeout", "register_timeout", "goal", "values", "keys", "volatile", "origins", "paths", "login",
              "packages")


@dataclass(frozen=True)
class AppSpec:
    """One application for a real driver (see the module docstring for every field).

    Build one with :meth:`from_dict`, :meth:`from_command`, :meth:`from_url`,
    :func:`load_spec` or :func:`builtin_spec`; change one with :meth:`replace`.
    :func:`~spatialobs.screen.drivers.make_driver` turns it into a driver.

    Examples
    --------
    >>> s = AppSpec.from_dict({"name": "calc", "command": ["galculator"], "values": ["7"]})
    >>> s.replace(goal="add two numbers").goal, s.values
    ('add two numbers', ('7',))
    """

    name: str
    driver: str = "desktop"
    command: Tuple[str, ...] = ()
    url: str = ""
    toolkit: str = "auto"
    env: Mapping[str, str] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)
    folders: Tuple[str, ...] = ()
    tree: Optional[SeedTree] = None
    settle: float = 0.15
    launch_timeout: float = 20.0
    register_timeout: float = 5.0
    goal: str = ""
    values: Tuple[str, ...] = ("hello", "42")
    keys: Tuple[str, ...] = ("escape", "enter", "tab")
    volatile: Tuple[VolatileRule, ...] = ()
    origins: Tuple[str, ...] = ()
    paths: Tuple[str, ...] = ()
    login: Tuple[LoginStep, ...] = ()
    packages: str = ""
    #: Where the spec was read from (a file, ``cmd:``, ``web:``, ``builtin:NAME``): named in error messages.
    source: str = field(default="<dict>", compare=False)

    # -- building ------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "<dict>", base: Optional[str] = None) -> "AppSpec":
        """A spec from a mapping with the keys of a spec file (``base``: the folder relative paths start from)."""
        if not isinstance(data, Mapping):
            raise SpecError(f"spec {source}: must be a table of keys, got {type(data).__name__}")
        for k in data:
            if k not in _SPEC_KEYS:
                near = difflib.get_close_matches(str(k), _SPEC_KEYS, n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else f" (known keys: {', '.join(_SPEC_KEYS)})"
                raise SpecError(f"spec {source}: unknown key {k!r}{hint}")
        p = _Parser(source)
        command = p.command(data.get("command"))
        url = p.string(data, "url", "")
        if url and base and "://" not in url and not os.path.isabs(url):
            url = os.path.normpath(os.path.join(base, url))
        driver = p.choice(data, "driver", DRIVERS, "web" if url and not command else "desktop")
        if driver == "desktop":
            if url:
                raise SpecError(f"spec {source}: a desktop spec has a command, not a url (or set driver = \"web\")")
            if not command:
                raise SpecError(f"spec {source}: missing 'command' (the program and its arguments, e.g. "
                                "command = [\"galculator\"])")
        elif driver == "web":
            if command:
                raise SpecError(f"spec {source}: a web spec has a url, not a command")
            if not url:
                raise SpecError(f"spec {source}: missing 'url' (the start page, or a folder to serve)")
            _check_url(url, source)
        default_name = os.path.basename(command[0]) if command else ("jupyterlab" if driver == "jupyterlab" else "")
        if driver == "web" and url:
            default_name = "web:" + (urlsplit(url).netloc if "://" in url else os.path.basename(url.rstrip("/")))
        name = p.string(data, "name", default_name) or default_name
        if not name.strip():
            raise SpecError(f"spec {source}: 'name' must not be empty")
        origins = p.strings(data, "origins", ())
        for o in origins:
            parts = urlsplit(o)
            if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
                raise SpecError(f"spec {source}: origin {o!r} must be scheme://host[:port], e.g. http://127.0.0.1:8000")
        paths = p.strings(data, "paths", ())
        for q in paths:
            if not q.startswith("/") or any(c in q for c in "?#") or any(c.isspace() for c in q):
                raise SpecError(f"spec {source}: path {q!r} must be a URL path starting with '/', e.g. /lab")
        spec = cls(
            name=name, driver=driver, command=command, url=url,
            toolkit=p.choice(data, "toolkit", TOOLKITS, "auto"),
            env=p.table(data, "env"), files=p.files(data.get("files")),
            folders=tuple(_relative(f, source, "folder") for f in p.strings(data, "folders", ())),
            tree=p.tree(data.get("tree")),
            settle=p.seconds(data, "settle", 0.05 if driver == "web" else 0.15, zero=True),
            launch_timeout=p.seconds(data, "launch_timeout", 20.0),
            register_timeout=p.seconds(data, "register_timeout", 5.0),
            goal=p.string(data, "goal", ""),
            values=p.strings(data, "values", ("hello", "42")),
            keys=p.strings(data, "keys", ("escape", "enter", "tab")),
            volatile=p.volatile(data.get("volatile")),
            origins=tuple(o.rstrip("/") for o in origins),
            paths=tuple(q.rstrip("/") or "/" for q in paths),
            login=p.login(data.get("login")),
            packages=p.string(data, "packages", ""),
            source=source,
        )
        if driver != "desktop":
            for k in ("toolkit", "env", "folders", "tree", "register_timeout") + (("files",) if driver == "web" else ()):
                if k in data:
                    raise SpecError(f"spec {source}: {k!r} applies to desktop applications only")
        if driver != "web":
            for k in ("origins", "login"):
                if k in data:
                    raise SpecError(f"spec {source}: {k!r} applies to web applications only")
        if driver == "desktop" and "paths" in data:
            raise SpecError(f"spec {source}: 'paths' applies to web applications and JupyterLab only")
        return spec

    @classmethod
    def from_command(cls, command: str, **fields: Any) -> "AppSpec":
        """A desktop spec from a command line (``"cmd:galculator --flag"`` or ``"galculator --flag"``).

        Other fields may be given as keyword arguments (the keys of a spec file).
        """
        if not isinstance(command, str):
            raise SpecError(f"a command must be a string, got {type(command).__name__}")
        text = command[4:] if command.startswith("cmd:") else command
        return cls.from_dict({**fields, "command": text}, source=f"cmd:{text}")

    @classmethod
    def from_url(cls, url: str, **fields: Any) -> "AppSpec":
        """A web spec from a start URL or a local folder (``"web:URL"`` or ``"URL"``)."""
        if not isinstance(url, str):
            raise SpecError(f"a URL must be a string, got {type(url).__name__}")
        text = url[4:] if url.startswith("web:") else url
        return cls.from_dict({**fields, "url": text, "driver": "web"}, source=f"web:{text}")

    def replace(self, **changes: Any) -> "AppSpec":
        """A copy with some fields changed, checked as a spec file's keys are."""
        data = self.to_dict()
        data.update(changes)
        return AppSpec.from_dict(data, source=self.source)

    def to_dict(self) -> Dict[str, Any]:
        """The spec as the keys of a spec file (TOML-ready, defaults included)."""
        out: Dict[str, Any] = {"name": self.name, "driver": self.driver}
        if self.command:
            out["command"] = list(self.command)
        if self.url:
            out["url"] = self.url
        if self.driver == "jupyterlab":
            out["files"] = dict(self.files)
        if self.driver == "desktop":
            out.update(toolkit=self.toolkit, env=dict(self.env), files=dict(self.files), folders=list(self.folders),
                       register_timeout=self.register_timeout)
            if self.tree is not None:
                t = self.tree
                out["tree"] = {"root": t.root, "folders": list(t.folders), "files": list(t.files),
                               "shape": list(t.shape), "files_per_folder": t.files_per_folder}
        if self.driver != "desktop" and self.paths:
            out["paths"] = list(self.paths)
        if self.driver == "web":
            out["origins"] = list(self.origins)
            out["login"] = [{s.op: s.target, **({"value": s.value} if s.op == "fill" else {})} for s in self.login]
        out.update(settle=self.settle, launch_timeout=self.launch_timeout, goal=self.goal, values=list(self.values),
                   keys=list(self.keys), packages=self.packages,
                   volatile=[{"pattern": r.pattern, "replace": r.replace, **({"role": r.role} if r.role else {})}
                             for r in self.volatile])
        return out

    # -- launching -----------------------------------------------------------------------

    @property
    def program(self) -> str:
        """The program a desktop spec runs (its command's first word)."""
        return self.command[0] if self.command else ""

    def argv(self, home: str) -> List[str]:
        """The command line of a launch whose HOME is ``home``."""
        return [a.replace("{home}", home) for a in self.command]

    def seed_home(self, home: str, rng: random.Random) -> None:
        """Lay out the spec's folders, files and seeded tree under ``home``."""
        for d in self.folders:
            os.makedirs(_inside(home, d, "folder"), exist_ok=True)
        for rel, text in self.files.items():
            path = _inside(home, rel, "file")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        if self.tree is not None:
            self.tree.lay_out(home, rng)

    def launch_env(self, home: str) -> Dict[str, str]:
        """The spec's own environment variables for a launch whose HOME is ``home``."""
        return {k: v.replace("{home}", home) for k, v in self.env.items()}

    def belongs(self, url: str) -> bool:
        """Whether a page's URL is of this web app (its origin is one of :attr:`origins`, or the start URL's,
        and its path one of :attr:`paths`, when the spec names them)."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        allowed = self.origins or ((_origin(self.url),) if "://" in self.url else ())
        return origin in allowed and self.owns_path(parts.path)

    def owns_path(self, path: str) -> bool:
        """Whether a URL path of the app's origin is the application: one of :attr:`paths` or below it
        (``"/lab"`` owns ``/lab`` and ``/lab/tree/a.md``, not ``/laboratory``); every path when there are none.

        Examples
        --------
        >>> spec = AppSpec.from_dict({"driver": "jupyterlab", "paths": ["/lab"]})
        >>> spec.owns_path("/lab/tree/notes.md"), spec.owns_path("/logout"), spec.owns_path("/laboratory")
        (True, False, False)
        """
        if not self.paths:
            return True
        return any(q == "/" or path == q or path.startswith(q + "/") for q in self.paths)


def _origin(url: str) -> str:
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc}"


def _check_url(url: str, source: str) -> None:
    if "://" in url:
        if urlsplit(url).scheme not in ("http", "https"):
            raise SpecError(f"spec {source}: the url must be http(s) or a local folder, got {url!r}")
    elif not os.path.isdir(url):
        raise SpecError(f"spec {source}: url {url!r} is neither an http(s) URL nor a folder")


def _relative(path: str, source: str, what: str) -> str:
    norm = os.path.normpath(path)
    if os.path.isabs(path) or norm == ".." or norm.startswith(".." + os.sep) or not path.strip():
        raise SpecError(f"spec {source}: {what} {path!r} must be a relative path inside the launch's HOME")
    return norm


def _inside(home: str, rel: str, what: str) -> str:
    path = os.path.normpath(os.path.join(home, rel))
    if os.path.commonpath([os.path.abspath(home), os.path.abspath(path)]) != os.path.abspath(home):
        raise SpecError(f"the {what} {rel!r} leaves the launch's HOME")
    return path


class _Parser:
    """Typed reads of a spec's keys, each error naming the spec and the key."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, key: str, want: str, got: Any) -> SpecError:
        shown = repr(got)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        return SpecError(f"spec {self.source}: {key!r} must be {want}, got {shown}")

    def string(self, data: Mapping[str, Any], key: str, default: str) -> str:
        v = data.get(key, default)
        if not isinstance(v, str):
            raise self.fail(key, "a string", v)
        return v

    def choice(self, data: Mapping[str, Any], key: str, options: Sequence[str], default: str) -> str:
        v = data.get(key, default)
        if v not in options:
            raise self.fail(key, "one of " + ", ".join(options), v)
        return str(v)

    def strings(self, data: Mapping[str, Any], key: str, default: Tuple[str, ...]) -> Tuple[str, ...]:
        v = data.get(key, default)
        if isinstance(v, str) or not isinstance(v, (list, tuple)) or not all(isinstance(x, str) and x for x in v):
            raise self.fail(key, "a list of non-empty strings", v)
        return tuple(v)

    def seconds(self, data: Mapping[str, Any], key: str, default: float, zero: bool = False) -> float:
        v = data.get(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 \
                or (v == 0 and not zero):
            raise self.fail(key, "a number of seconds " + (">= 0" if zero else "> 0"), v)
        return float(v)

    def table(self, data: Mapping[str, Any], key: str) -> Dict[str, str]:
        v = data.get(key, {})
        if not isinstance(v, Mapping) or not all(isinstance(k, str) and isinstance(x, str) for k, x in v.items()):
            raise self.fail(key, "a table of strings (NAME = \"value\")", v)
        return dict(v)

    def command(self, v: Any) -> Tuple[str, ...]:
        if v is None:
            return ()
        if isinstance(v, str):
            try:
                words = shlex.split(v)
            except ValueError as e:
                raise SpecError(f"spec {self.source}: 'command' cannot be split ({e})") from None
        elif isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v):
            words = list(v)
        else:
            raise self.fail("command", "a string or a list of strings", v)
        if not words or not words[0].strip():
            raise SpecError(f"spec {self.source}: missing 'command' (the program and its arguments, e.g. "
                            "command = [\"galculator\"])")
        return tuple(words)

    def files(self, v: Any) -> Dict[str, str]:
        if v is None:
            return {}
        if not isinstance(v, Mapping) or not all(isinstance(k, str) and isinstance(x, str) for k, x in v.items()):
            raise self.fail("files", "a table of relative paths to their text (\"notes.txt\" = \"\")", v)
        return {_relative(k, self.source, "file"): x for k, x in v.items()}

    def tree(self, v: Any) -> Optional[SeedTree]:
        if v is None:
            return None
        if not isinstance(v, Mapping):
            raise self.fail("tree", "a table (root, folders, files, shape, files_per_folder)", v)
        extra = [k for k in v if k not in ("root", "folders", "files", "shape", "files_per_folder")]
        if extra:
            raise SpecError(f"spec {self.source}: unknown key {extra[0]!r} in 'tree' "
                            "(root, folders, files, shape, files_per_folder)")
        folders, files = self.strings(v, "folders", ()), self.strings(v, "files", ())
        shape = v.get("shape", ())
        if not isinstance(shape, (list, tuple)) or not all(isinstance(n, int) and not isinstance(n, bool)
                                                            and 0 <= n <= len(folders) for n in shape):
            raise self.fail("tree.shape", f"a list of folder counts between 0 and {len(folders)}", shape)
        per = v.get("files_per_folder", 0)
        if not isinstance(per, int) or isinstance(per, bool) or not 0 <= per <= len(files):
            raise self.fail("tree.files_per_folder", f"an integer between 0 and {len(files)}", per)
        root = self.string(v, "root", "Files")
        return SeedTree(_relative(root, self.source, "tree root"), folders, files, tuple(shape), per)

    def volatile(self, v: Any) -> Tuple[VolatileRule, ...]:
        if v is None:
            return ()
        if not isinstance(v, (list, tuple)):
            raise self.fail("volatile", "a list of rules ([[volatile]] tables with pattern, replace, role)", v)
        out = []
        for i, r in enumerate(v):
            if not isinstance(r, Mapping):
                raise self.fail(f"volatile[{i}]", "a table (pattern, replace, role)", r)
            extra = [k for k in r if k not in ("pattern", "replace", "role")]
            if extra:
                raise SpecError(f"spec {self.source}: unknown key {extra[0]!r} in volatile rule {i} "
                                "(pattern, replace, role)")
            try:
                out.append(VolatileRule(r.get("pattern", ""), r.get("replace", "*"), r.get("role")))
            except SpecError as e:
                raise SpecError(f"spec {self.source}: volatile rule {i}: {e}") from None
        return tuple(out)

    def login(self, v: Any) -> Tuple[LoginStep, ...]:
        if v is None:
            return ()
        if not isinstance(v, (list, tuple)):
            raise self.fail("login", "a list of steps ([[login]] tables)", v)
        out = []
        for i, step in enumerate(v):
            ops = [k for k in step if k in _LOGIN_OPS] if isinstance(step, Mapping) else []
            if not isinstance(step, Mapping) or len(ops) != 1 or any(k not in _LOGIN_OPS + ("value",) for k in step):
                raise self.fail(f"login[{i}]", "a table with one of " + ", ".join(_LOGIN_OPS)
                                + " (and value for fill)", step)
            target, value = step[ops[0]], step.get("value", "")
            if not isinstance(target, str) or not target or not isinstance(value, str):
                raise self.fail(f"login[{i}].{ops[0]}", "a non-empty string", target)
            if ("value" in step) != (ops[0] == "fill"):
                raise SpecError(f"spec {self.source}: login step {i}: 'value' goes with fill only")
            out.append(LoginStep(ops[0], target, value))
        return tuple(out)


def _read_toml(path: Path, source: str) -> Dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - the 3.9/3.10 backport of the same parser
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            return dict(tomllib.load(f))
    except OSError as e:
        raise SpecError(f"spec {source}: cannot be read ({e.strerror or e})") from None
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"spec {source}: not TOML ({e})") from None
    except UnicodeDecodeError:
        raise SpecError(f"spec {source}: not UTF-8 text") from None


def load_spec(path: Union[str, "os.PathLike[str]"]) -> AppSpec:
    """The spec in a TOML file (see the module docstring); :class:`SpecError` names the file and the key.

    ``name`` defaults to the program's name (a web app: ``web:HOST``); a relative
    ``url`` folder is relative to the file's folder.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "calc.toml")
    ...     _ = Path(p).write_text('command = "galculator"\\ngoal = "add numbers"\\n')
    ...     load_spec(p).goal
    'add numbers'
    """
    p = Path(path)
    source = p.name
    if p.is_dir():
        raise SpecError(f"spec {source}: is a folder, not a TOML file")
    if not p.exists():
        raise SpecError(f"spec {source}: no such file")
    return AppSpec.from_dict(_read_toml(p, source), source=source, base=str(p.resolve().parent))


def builtin_spec(name: str) -> AppSpec:
    """The spec shipped with the package for ``name`` (one of :data:`BUILTIN_APPS`).

    Examples
    --------
    >>> builtin_spec("mousepad").command
    ('mousepad', '--disable-server', '{home}/notes.txt')
    """
    if name not in BUILTIN_APPS:
        raise SpecError(f"no shipped spec {name!r}; the shipped ones are {', '.join(BUILTIN_APPS)}")
    spec = load_spec(APPS_DIR / f"{name}.toml")
    return dataclasses.replace(spec, source=f"builtin:{name}")
