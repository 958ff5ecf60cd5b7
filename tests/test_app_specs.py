"""App specs as data: the shipped specs, spec files, cmd: and web: strings, volatile rules, bad specs, toolkits."""

from __future__ import annotations

import os
import random
import shutil

import pytest

from spatialobs import InvalidInputError
from spatialobs.screen.drivers import (
    BUILTIN_APPS,
    AppSpec,
    SpecError,
    VolatileRule,
    builtin_spec,
    load_spec,
    make_driver,
    resolve_app,
)
from spatialobs.screen.drivers.spec import APPS_DIR, SeedTree, apply_volatile
from spatialobs.screen.drivers.toolkits import bridge_problem, default_env, detect_toolkit


def test_the_named_applications_are_spec_files_shipped_with_the_package():
    assert set(BUILTIN_APPS) == {"mousepad", "pcmanfm", "localc", "lowriter", "loimpress", "lomath", "featherpad",
                                 "galculator", "jupyterlab"}
    assert sorted(p.name for p in APPS_DIR.glob("*.toml")) == [f"{n}.toml" for n in sorted(BUILTIN_APPS)]
    m = builtin_spec("mousepad")
    assert (m.driver, m.toolkit, m.files, m.argv("/h")) == ("desktop", "gtk3", {"notes.txt": ""},
                                                           ["mousepad", "--disable-server", "/h/notes.txt"])
    assert builtin_spec("localc").env == {"SAL_USE_VCLPLUGIN": "gtk3"} and builtin_spec("pcmanfm").toolkit == "gtk2"
    assert [r.replace for r in builtin_spec("pcmanfm").volatile] == ["Free space"]
    j = builtin_spec("jupyterlab")
    assert j.driver == "jupyterlab" and "analysis.ipynb" in j.files and len(j.volatile) == 5
    assert resolve_app("pcmanfm") == builtin_spec("pcmanfm") and resolve_app("calc") == "calc"
    for name, mode in (("lowriter", "--writer"), ("loimpress", "--impress"), ("lomath", "--math")):
        lo = builtin_spec(name)
        assert (lo.name, lo.command[0], lo.command[-1], lo.toolkit) == (name, "soffice", mode, "gtk3")
    assert builtin_spec("featherpad").toolkit == "qt5" and builtin_spec("galculator").toolkit == "gtk3"
    with pytest.raises(SpecError, match="no shipped spec 'gedit'"):
        builtin_spec("gedit")


def _old_pcmanfm_tree(home, rng):
    # The folder tree PCManFM's driver laid out in code before it became its spec's [tree]: the oracle.
    folders = ("Projects", "Reports", "Archive", "Photos", "Invoices", "Drafts", "Music", "Notes")
    files = ("budget.ods", "notes.txt", "summary.txt", "plan.odt", "photo.png", "data.csv", "readme.md")
    root = os.path.join(home, "Files")
    os.makedirs(root)
    for top in sorted(rng.sample(folders, 4)):
        os.makedirs(os.path.join(root, top))
        for sub in sorted(rng.sample(folders, 2)):
            os.makedirs(os.path.join(root, top, sub))
        for name in sorted(rng.sample(files, 3)):
            open(os.path.join(root, top, name), "w").close()
    for name in sorted(rng.sample(files, 3)):
        open(os.path.join(root, name), "w").close()


def _tree(path):
    return sorted(os.path.relpath(os.path.join(d, n), path) for d, ds, fs in os.walk(path) for n in ds + fs)


@pytest.mark.parametrize("seed", range(6))
def test_the_pcmanfm_spec_lays_out_the_same_seeded_tree_as_before(tmp_path, seed):
    old, new = tmp_path / "old", tmp_path / "new"
    _old_pcmanfm_tree(str(old), random.Random(f"pcmanfm:{seed}"))
    new.mkdir()
    builtin_spec("pcmanfm").seed_home(str(new), random.Random(f"pcmanfm:{seed}"))
    assert _tree(old) == _tree(new) and len(_tree(new)) == 4 + 8 + 12 + 3 + 1


def test_spec_files_cmd_and_web(tmp_path):
    p = tmp_path / "calc.toml"
    p.write_text('command = "galculator --flag \'two words\'"\ngoal = "add"\nvalues = ["7"]\n'
                 'register_timeout = 3\n[env]\nLANG = "C.UTF-8"\nDATA = "{home}/data"\n'
                 '[[volatile]]\nrole = "text"\npattern = "^.*$"\nreplace = "<display>"\n')
    s = load_spec(p)
    assert (s.name, s.command, s.values, s.register_timeout) == ("galculator", ("galculator", "--flag", "two words"),
                                                                 ("7",), 3.0)
    assert s.launch_env("/h") == {"LANG": "C.UTF-8", "DATA": "/h/data"} and s.source == "calc.toml"
    assert AppSpec.from_command("cmd:galculator --flag 'two words'").command == s.command
    # a spec's own folder url is relative to the spec file
    site = tmp_path / "site"
    site.mkdir()
    (tmp_path / "web.toml").write_text('url = "site"\norigins = ["http://127.0.0.1:8000"]\n')
    w = load_spec(tmp_path / "web.toml")
    assert (w.driver, w.url, w.name, w.origins) == ("web", str(site), "web:site", ("http://127.0.0.1:8000",))
    u = AppSpec.from_url("web:http://127.0.0.1:8765/")
    assert (u.name, u.belongs("http://127.0.0.1:8765/x"), u.belongs("http://localhost:8765/")) == \
        ("web:127.0.0.1:8765", True, False)
    # replace() checks as a file is checked; to_dict() round-trips
    assert s.replace(goal="sum").goal == "sum" and AppSpec.from_dict(s.to_dict()) == s
    with pytest.raises(SpecError, match="'settle' must be a number of seconds >= 0"):
        s.replace(settle=-1)


@pytest.mark.parametrize("data,message", [
    ({}, "missing 'command'"),
    ({"command": ""}, "missing 'command'"),
    ({"command": []}, "missing 'command'"),
    ({"comand": "x"}, r"unknown key 'comand' \(did you mean 'command'\?\)"),
    ({"command": "x", "zzz": 1}, "unknown key 'zzz' \\(known keys: name, driver, command"),
    ({"command": 3}, "'command' must be a string or a list of strings, got 3"),
    ({"command": "x 'unclosed"}, "'command' cannot be split"),
    ({"command": "x", "url": "http://a/"}, "a desktop spec has a command, not a url"),
    ({"url": "ftp://a/"}, "the url must be http\\(s\\) or a local folder"),
    ({"url": "no/such/folder"}, "is neither an http\\(s\\) URL nor a folder"),
    ({"command": "x", "toolkit": "motif"}, "'toolkit' must be one of auto, gtk2"),
    ({"command": "x", "settle": "fast"}, "'settle' must be a number of seconds >= 0"),
    ({"command": "x", "launch_timeout": 0}, "'launch_timeout' must be a number of seconds > 0"),
    ({"command": "x", "values": "42"}, "'values' must be a list of non-empty strings"),
    ({"command": "x", "env": {"A": 1}}, "'env' must be a table of strings"),
    ({"command": "x", "files": {"../escape.txt": ""}}, "file '../escape.txt' must be a relative path inside"),
    ({"command": "x", "folders": ["/abs"]}, "folder '/abs' must be a relative path inside"),
    ({"command": "x", "volatile": [{"pattern": "("}]}, "volatile rule 0: .*is not a regular expression"),
    ({"command": "x", "volatile": [{"pattern": "a", "flags": "i"}]}, "unknown key 'flags' in volatile rule 0"),
    ({"command": "x", "tree": {"folders": ["a"], "shape": [2]}}, "'tree.shape' must be a list of folder counts"),
    ({"command": "x", "origins": ["http://a/"]}, "'origins' applies to web applications only"),
    ({"url": "http://a/", "origins": ["a.com"]}, "origin 'a.com' must be scheme://host"),
    ({"url": "http://a/", "login": [{"click": "#b", "value": "x"}]}, "'value' goes with fill only"),
    ({"url": "http://a/", "login": [{"tap": "#b"}]}, "'login\\[0\\]' must be a table with one of goto"),
    ({"url": "http://a/", "env": {"A": "b"}}, "'env' applies to desktop applications only"),
    ({"command": "x", "paths": ["/a"]}, "'paths' applies to web applications and JupyterLab only"),
    ({"url": "http://a/", "paths": "/lab"}, "'paths' must be a list of non-empty strings"),
    ({"url": "http://a/", "paths": ["lab"]}, "path 'lab' must be a URL path starting with '/', e.g. /lab$"),
    ({"driver": "jupyterlab", "paths": ["/lab?reset"]}, r"path '/lab\?reset' must be a URL path starting with '/'"),
    ({"url": "http://a/", "paths": ["/my lab"]}, "path '/my lab' must be a URL path starting with '/'"),
])
def test_bad_specs_name_the_spec_and_the_key(data, message):
    with pytest.raises(SpecError, match=r"^spec <dict>: .*" + message):
        AppSpec.from_dict(data)


def test_paths_name_the_pages_of_the_origin_that_are_the_app():
    s = AppSpec.from_dict({"url": "http://a/app/", "paths": ["/app/", "/help"]})
    assert s.paths == ("/app", "/help") and AppSpec.from_dict(s.to_dict()) == s
    assert s.belongs("http://a/app/") and s.belongs("http://a/app/x/y.html?q=1") and s.belongs("http://a/help")
    assert not s.belongs("http://a/logout") and not s.belongs("http://a/application") and not s.belongs("http://b/app")
    # no paths: every page of the origin is the app
    assert AppSpec.from_dict({"url": "http://a/"}).belongs("http://a/logout")
    assert AppSpec.from_dict({"url": "http://a/", "paths": ["/"]}).belongs("http://a/logout")
    lab = builtin_spec("jupyterlab")
    assert lab.paths == ("/lab",) and lab.owns_path("/lab/tree/notes.md") and not lab.owns_path("/logout")


def test_bad_spec_files(tmp_path):
    with pytest.raises(SpecError, match=r"^spec nope.toml: no such file$"):
        load_spec(tmp_path / "nope.toml")
    (tmp_path / "t.toml").write_text("command = [\n")
    with pytest.raises(SpecError, match=r"^spec t.toml: not TOML"):
        load_spec(tmp_path / "t.toml")
    (tmp_path / "b.toml").write_bytes(b'command = "\xff"\n')
    with pytest.raises(SpecError, match=r"^spec b.toml: not (UTF-8 text|TOML)"):
        load_spec(tmp_path / "b.toml")
    with pytest.raises(SpecError, match=r"is a folder, not a TOML file"):
        load_spec(tmp_path)
    assert issubclass(SpecError, InvalidInputError)


def test_volatile_rules_by_pattern_and_role():
    rules = (VolatileRule(r"\d+(\.\d+)? GiB", "<size>"), VolatileRule("^.*$", "<display>", role="Text"))
    assert apply_volatile(rules, "Free: 3.5 GiB", "label") == "Free: <size>"
    assert apply_volatile(rules, "12.5", "text") == "<display>"  # the role is compared case-blind
    assert apply_volatile(rules, "12.5", "push button") == "12.5"
    assert apply_volatile((VolatileRule("^x$", ""),), "x", "label") is None  # emptied: no text
    assert apply_volatile(rules, None, "text") is None and apply_volatile((), "a", "b") == "a"
    with pytest.raises(SpecError, match="needs a non-empty pattern"):
        VolatileRule("")


def test_seed_tree_and_files_stay_inside_home(tmp_path):
    t = SeedTree("Files", ("A", "B", "C", "D"), ("x", "y", "z"), (3, 1), 2)
    t.lay_out(str(tmp_path), random.Random(1))
    tops = [d for d in os.listdir(tmp_path / "Files") if os.path.isdir(tmp_path / "Files" / d)]
    assert len(tops) == 3 and all(len(os.listdir(tmp_path / "Files" / d)) == 1 + 2 for d in tops)
    s = AppSpec.from_dict({"command": "x", "folders": ["a/b"], "files": {"a/c.txt": "hi"}})
    s.seed_home(str(tmp_path / "h"), random.Random(0))
    assert (tmp_path / "h" / "a" / "c.txt").read_text() == "hi" and (tmp_path / "h" / "a" / "b").is_dir()


def test_make_driver_takes_names_strings_and_specs():
    d = make_driver("notepad")
    assert d.reset().meta.app == "notepad"
    with pytest.raises(InvalidInputError, match=r"unknown application 'wordpad'; choose one of .*cmd:COMMAND"):
        make_driver("wordpad")
    with pytest.raises(InvalidInputError, match="must be a name or an AppSpec"):
        make_driver(3)  # type: ignore[arg-type]
    from spatialobs.screen.drivers.atspi import AtspiDriver

    with pytest.raises(InvalidInputError, match="a web spec, not a desktop application"):
        AtspiDriver(AppSpec.from_url("http://127.0.0.1:1/"))


def test_toolkit_settings_and_detection(monkeypatch):
    env = default_env()
    assert env["GTK_MODULES"] == "gail:atk-bridge" and env["QT_LINUX_ACCESSIBILITY_ALWAYS_ON"] == "1"
    assert "NO_AT_BRIDGE" not in env and env["GTK_A11Y"] == "atspi"
    assert detect_toolkit("sh") == "auto"
    for program, kit in (("galculator", "gtk3"), ("gpicview", "gtk2"), ("featherpad", "qt5"),
                         ("mousepad", "gtk3"), ("pcmanfm", "gtk2")):
        if shutil.which(program):
            assert detect_toolkit(program) == kit, program
    # the GTK 2 bridge is checked before a launch: missing, the driver says which package holds it
    from spatialobs.screen.drivers import toolkits

    monkeypatch.setattr(toolkits, "gtk2_bridge_paths", lambda: ("/nonexistent/gtk-2.0/modules/libatk-bridge.so",))
    why = bridge_problem("gtk2")
    assert why is not None and "libatk-adaptor" in why and bridge_problem("gtk3") is None
    from spatialobs.screen.drivers import atspi

    monkeypatch.setattr(atspi, "bridge_problem", bridge_problem)
    if shutil.which("pcmanfm"):
        assert "GTK 2 accessibility bridge is not installed" in (atspi.unavailable_reason("pcmanfm") or "")
