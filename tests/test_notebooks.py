"""The notebooks in ``notebooks/`` run top to bottom against an export of the sample store."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
nbformat = pytest.importorskip("nbformat", reason="the notebook tests need the test extra")
nbclient = pytest.importorskip("nbclient", reason="the notebook tests need the test extra")


@pytest.fixture(scope="module")
def export(sample_export: Path) -> Path:
    return sample_export


def test_the_three_notebooks_exist_with_their_outputs_stripped() -> None:
    assert [p.name for p in NOTEBOOKS] == [
        "01_explore.ipynb", "02_preferences.ipynb", "03_sft_filtering.ipynb",
    ]  # fmt: skip
    for path in NOTEBOOKS:
        cells = nbformat.read(path, as_version=4).cells
        assert all(not c.get("outputs") and not c.get("execution_count") for c in cells
                   if c.cell_type == "code"), f"{path.name}: strip its outputs before committing"  # fmt: skip


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::RuntimeWarning")
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
@pytest.mark.slow
def test_notebook_runs_without_error(
    path: Path, export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAJSET_EXPORT", str(export))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.chdir(tmp_path)
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=240, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    )
    client.execute()  # raises CellExecutionError naming the cell on any error
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert os.listdir(tmp_path) == [] or all(not n.endswith(".ipynb") for n in os.listdir(tmp_path))
