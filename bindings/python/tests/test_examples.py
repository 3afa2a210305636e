"""The examples run as they are documented."""
import os
import subprocess
import sys

import numpy as np
import pytest

import fdk_ct

HERE = os.path.dirname(os.path.abspath(__file__))


def run_example(name, *args, mplbackend=None):
    """Runs examples/`name` with this fdk_ct first on the path; MPLBACKEND
    as given, or unset (the drawing examples pick Agg themselves)."""
    script = os.path.join(HERE, "..", "examples", name)
    src = os.path.dirname(os.path.dirname(os.path.abspath(fdk_ct.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    env.pop("MPLBACKEND", None)
    if mplbackend:
        env["MPLBACKEND"] = mplbackend
    out = subprocess.run([sys.executable, script, *args], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return out


def test_phantom_tour_runs_and_agrees():
    out = run_example("phantom_tour.py", mplbackend="Agg")
    assert "streamed == one call: True" in out.stdout
    assert "refused: FDK_ERROR_INVALID_ARGUMENT" in out.stdout
    brain = float(out.stdout.split("brain: ")[1].split()[0])
    assert abs(brain - 0.004) < 0.0004


def test_orthogonal_slices_writes_three_views_of_the_volume(tmp_path):
    # Skipped, saying so, where matplotlib is missing (Debian: python3-matplotlib).
    pytest.importorskip("matplotlib", reason="skipped: matplotlib not installed")
    import matplotlib.image

    out = run_example("orthogonal_slices.py", str(tmp_path))
    assert "VolumeArray(shape=(96, 96, 96), spacing=(1.25, 1.25, 1.25)" in out.stdout
    png = tmp_path / "orthogonal_slices.png"
    assert out.stdout.strip().endswith(f"wrote {png}")
    image = matplotlib.image.imread(str(png))
    assert image.shape[:2] == (336, 960)  # figsize (12, 4.2) at 80 dpi
    # Three panels of a head, not an empty figure: a white page or black
    # panels have almost no mid grey; the brain (0.004 of the 0.01 window)
    # is mid grey, over a tenth of each panel's third of the figure.
    grey = image[..., :3].mean(axis=-1)
    for third in np.array_split(grey[:, :870], 3, axis=1):
        assert np.mean((third > 0.25) & (third < 0.6)) > 0.1


def test_live_preview_draws_the_scan_as_it_arrives(tmp_path):
    # Skipped, saying so, where matplotlib is missing (Debian: python3-matplotlib).
    pytest.importorskip("matplotlib", reason="skipped: matplotlib not installed")
    import matplotlib.image

    out = run_example("live_preview.py", str(tmp_path))
    frames = [line for line in out.stdout.splitlines() if line.startswith("frame: ")]
    # The scanner takes 2 s at 120 views/s and the preview is read every
    # 0.5 s: frames during the scan, then the complete one.
    assert len(frames) >= 2, out.stdout
    views = [int(line.split()[1]) for line in frames]
    assert views == sorted(set(views)) and views[-1] == 240, out.stdout
    assert frames[-1].endswith("coverage 1.00, complete")
    assert not frames[0].endswith("complete")
    png = tmp_path / "live_preview.png"
    assert out.stdout.strip().endswith(f"wrote {png}")
    image = matplotlib.image.imread(str(png))
    assert image.shape[:2] == (232, 192 * len(frames))  # figsize (2.4 a frame, 2.9) at 80 dpi
    # The complete frame is a head: the brain (0.004 of the 0.01 window) is
    # mid grey over much of the last panel.
    last = image[40:, -192:, :3].mean(axis=-1)
    assert np.mean((last > 0.25) & (last < 0.6)) > 0.2
