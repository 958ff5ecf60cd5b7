"""The ``environment`` mark: the tests CI runs again in a newcomer's clean clone (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import reads_environment

TESTS = Path(__file__).resolve().parent


def test_modules_that_read_the_shared_folder_or_a_harness_are_marked(tmp_path):
    # real modules: the canvas importer's tests read every shared file, the conformance tests a harness
    assert reads_environment(TESTS / "test_canvas_import.py")
    assert reads_environment(TESTS / "conformance" / "test_tldraw_writes.py")
    # the arrow kernels' tests compare on the shared files through tests/strategies.SHARED_TLDR
    assert reads_environment(TESTS / "test_canvas_arrows_kernel.py")
    # the checks of the checkout itself run again too, whatever they name
    assert reads_environment(TESTS / "test_readme.py")
    assert reads_environment(TESTS / "test_packaging.py")
    # a module that reads neither
    assert not reads_environment(TESTS / "test_geometry.py")
    assert not reads_environment(TESTS / "test_select_fpu.py")
    for text, marked in [
        ("def test_x(shared_data):\n    pass\n", True),
        ("from tests.conftest import shared_files\nFILES = shared_files('canvases')\n", True),
        ("from tests.conftest import SHARED_DATA\n", True),
        ("from tests.strategies import SHARED_TLDR\n", True),
        ("from tests.conformance.tldraw_harness import run\n", True),
        ("import os\nos.environ.get('SPATIALOBS_TLDRAW_HARNESS')\n", True),
        ("def test_y(tmp_path):\n    data_shared = 1\n", False),
    ]:
        module = tmp_path / "test_sample.py"
        module.write_text(text)
        assert reads_environment(module) is marked, text


def test_the_mark_is_set_at_collection(request):
    # this module names the shared fixture (above), so its own tests carry the mark
    assert request.node.get_closest_marker("environment") is not None


@pytest.mark.generated
def test_a_generated_test_of_such_a_module_is_left_out(request):
    # marked ``generated`` (its input is built by the test): a clean clone has nothing to change in it
    assert request.node.get_closest_marker("environment") is None
    assert request.node.get_closest_marker("generated") is not None
