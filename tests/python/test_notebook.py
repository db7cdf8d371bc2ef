"""examples/notebooks/live_scope.ipynb runs headless with nbconvert against a live simulated detector."""
import json
import os
import shutil
import subprocess

import pytest

from conftest import BUILD, SOURCE, WEIR


def test_the_live_scope_notebook_executes_and_draws_its_plots(tmp_path):
    nbconvert = shutil.which("jupyter-nbconvert")
    if nbconvert is None:
        pytest.skip("SKIPPED LOUDLY: jupyter-nbconvert is not installed (Debian: jupyter-nbconvert python3-ipykernel)")
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"), WEIR_CLI=str(os.path.abspath(WEIR)))
    notebook = SOURCE / "examples" / "notebooks" / "live_scope.ipynb"
    result = subprocess.run([nbconvert, "--to", "notebook", "--execute", "--ExecutePreprocessor.timeout=120",
                             "--output-dir", str(tmp_path), "--output", "executed.ipynb", str(notebook)],
                            capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    executed = json.loads((tmp_path / "executed.ipynb").read_text())
    outputs = [o for c in executed["cells"] for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    images = [o for o in outputs if o.get("output_type") == "display_data" and "image/png" in o["data"]]
    assert len(images) == 4  # waveform, spectrum, envelope, recorded waveform
    text = "".join("".join(o.get("text", "")) for o in outputs if o.get("output_type") == "stream")
    assert "lost while following: 0" in text
    assert "samples:" in text  # the recording opened with h5py
