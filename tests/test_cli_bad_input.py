"""The command line on bad input: exit 2 and one line, and one behaviour for output paths (issue 18)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import shared_files
from tests.test_cli import run

EXCALIDRAW = shared_files("canvases", "*.excalidraw")
REPLY = '```canvas_ops\n{"ops": [{"op": "create_shape", "id": "n", "text": "new"}]}\n```\n'
SCENE = {"type": "excalidraw", "elements": [{"id": "a", "type": "rectangle", "x": 0, "y": 0, "width": 10,
                                             "height": 10}]}


def _one_error_line(out, code=2):
    assert out.returncode == code, (out.stdout, out.stderr)
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("spatialobs: error: "), out.stderr
    assert "Traceback" not in out.stderr and "internal error" not in out.stderr
    return out.stderr.strip()


@pytest.mark.parametrize("path", EXCALIDRAW[:2], ids=lambda p: p.name)
def test_apply_writes_real_excalidraw_files_as_tldraw(path, tmp_path):
    # ended in "internal error" (TypeError from an image's scale [1, 1]) on real files
    (tmp_path / "r.txt").write_text(REPLY)
    out = run("apply", str(path), str(tmp_path / "r.txt"), "--out", str(tmp_path / "o.tldr"))
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "o.tldr").read_text())["records"]


def test_garbage_to_dedup_is_exit_2_and_one_line(tmp_path):
    (tmp_path / "g.json").write_text("garbage")
    out = run("dedup", str(tmp_path / "g.json"))
    assert _one_error_line(out).startswith(f"spatialobs: error: cannot read the screen {tmp_path / 'g.json'}: ")
    assert out.stdout == ""


@pytest.mark.parametrize("argv", [
    ("observe", "{d}"), ("render", "{d}", "--out", "{t}/x.svg"), ("apply", "{d}", "{t}/r.txt", "--out", "{t}/o.json"),
])
def test_a_folder_given_as_a_file_says_so(argv, tmp_path):
    d = tmp_path / "adir"
    d.mkdir()
    (tmp_path / "r.txt").write_text(REPLY)
    out = run(*(a.format(d=d, t=tmp_path) for a in argv))
    assert _one_error_line(out) == f"spatialobs: error: {d} is a folder, not a canvas file"


def test_a_folder_given_as_a_reply_or_output_says_so(tmp_path):
    (tmp_path / "c.excalidraw").write_text(json.dumps(SCENE))
    (tmp_path / "r.txt").write_text(REPLY)
    out = run("apply", str(tmp_path / "c.excalidraw"), str(tmp_path), "--out", str(tmp_path / "o.json"))
    assert _one_error_line(out) == f"spatialobs: error: {tmp_path} is a folder, not a reply file"
    out = run("apply", str(tmp_path / "c.excalidraw"), str(tmp_path / "r.txt"), "--out", str(tmp_path))
    assert _one_error_line(out) == f"spatialobs: error: --out {tmp_path} is a folder, not a file"
    assert out.stdout == ""  # before the work


@pytest.mark.parametrize("argv, written", [
    (("apply", "{c}", "{t}/r.txt", "--out", "{t}/new/deeper/o.excalidraw"), "new/deeper/o.excalidraw"),
    (("render", "{c}", "--out", "{t}/pics/o.svg"), "pics/o.svg"),
    (("dedup", "{s}", "--index", "{t}/idx/screens.spobs"), "idx/screens.spobs"),
])
def test_every_command_creates_the_folder_of_its_output(argv, written, tmp_path):
    # --out into a missing folder named the temporary file after printing every result
    (tmp_path / "c.excalidraw").write_text(json.dumps(SCENE))
    (tmp_path / "r.txt").write_text(REPLY)
    (tmp_path / "s.json").write_text(json.dumps(
        {"width": 10, "height": 10, "elements": [{"bounds": [0, 0, 10, 10], "role": "button"}]}))
    out = run(*(a.format(c=tmp_path / "c.excalidraw", t=tmp_path, s=tmp_path / "s.json") for a in argv))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / written).is_file()
    assert not [p for p in (tmp_path / written).parent.iterdir() if p.name.endswith(".tmp")]


def test_an_output_under_a_file_fails_before_the_work(tmp_path):
    (tmp_path / "c.excalidraw").write_text(json.dumps(SCENE))
    (tmp_path / "r.txt").write_text(REPLY)
    (tmp_path / "afile").write_text("x")
    out = run("apply", str(tmp_path / "c.excalidraw"), str(tmp_path / "r.txt"), "--out", str(tmp_path / "afile/o.json"))
    assert _one_error_line(out) == f"spatialobs: error: --out {tmp_path / 'afile/o.json'}: {tmp_path / 'afile'} is a file, not a folder"
    assert out.stdout == ""


def test_studies_real_with_an_unknown_app_is_one_line():
    out = run("studies", "--real", "--apps", "mousepad,nonesuch")
    assert _one_error_line(out) == ("spatialobs: error: --apps takes a comma-separated list of mousepad, pcmanfm, "
                                    "localc, jupyterlab, got 'mousepad,nonesuch'")
    assert _one_error_line(run("studies", "--real", "--apps", ",")).endswith("got ','")
    out = run("explore", "--app", "jupyter")
    assert _one_error_line(out) == ("spatialobs: error: --app must be one of notepad, explorer, calc, mousepad, "
                                    "pcmanfm, localc, jupyterlab, cmd:COMMAND or web:URL, got 'jupyter'")


def test_studies_real_writes_the_web_report_apart(monkeypatch, capsys):
    # JupyterLab alone goes to its own report, so the desktop study's file is left alone
    from spatialobs import cli
    from spatialobs.screen import studies

    calls = []
    monkeypatch.setattr(studies, "write_real_report", lambda out, apps, *a, **k: calls.append((out, apps)) or {})
    assert cli.main(["studies", "--real", "--apps", "jupyterlab", "--starts", "2"]) == 0
    assert cli.main(["studies", "--real", "--apps", "mousepad,jupyterlab"]) == 0
    assert calls == [("docs/results/real-apps-web.md", ["jupyterlab"]),
                     ("docs/results/real-apps.md", ["mousepad", "jupyterlab"])]


def test_studies_real_ablation_names_its_command_and_rejects_two_apps(monkeypatch, capsys):
    from spatialobs import cli
    from spatialobs.screen import studies

    calls = []
    monkeypatch.setattr(studies, "write_real_ablation",
                        lambda out, app, starts, steps, seed, **k: calls.append((out, app, starts, steps, k["command"])) or {})
    assert cli.main(["studies", "--real", "--ablation"]) == 0
    assert cli.main(["studies", "--real", "--ablation", "--apps", "pcmanfm", "--starts", "3"]) == 0
    assert calls == [("docs/results/real-apps.md", "mousepad", 10, 50,
                      "spatialobs studies --real --ablation --apps mousepad --starts 10 --steps 50"),
                     ("docs/results/real-apps.md", "pcmanfm", 3, 50,
                      "spatialobs studies --real --ablation --apps pcmanfm --starts 3 --steps 50")]
    out = run("studies", "--real", "--ablation", "--apps", "mousepad,pcmanfm")
    assert _one_error_line(out).startswith("spatialobs: error: --ablation takes one application of mousepad, ")


def test_real_apps_study_rejects_an_unknown_app():
    from spatialobs import InvalidInputError
    from spatialobs.screen import studies

    with pytest.raises(InvalidInputError, match=r"^unknown real application 'word'; choose from mousepad, "
                                                        r"pcmanfm, localc, jupyterlab$"):
        studies.real_apps(["word"])


def test_studies_real_clipboard_with_bad_trials_is_one_line():
    out = run("studies", "--real", "--clipboard", "--trials", "0", "--out", "never-written.md")
    assert _one_error_line(out) == "spatialobs: error: trials must be a positive integer, got 0"
    assert out.stdout == ""
