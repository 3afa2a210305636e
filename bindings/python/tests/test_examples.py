"""The examples run as they are documented."""
import os
import subprocess
import sys

import fdk_ct

HERE = os.path.dirname(os.path.abspath(__file__))


def test_phantom_tour_runs_and_agrees():
    script = os.path.join(HERE, "..", "examples", "phantom_tour.py")
    src = os.path.dirname(os.path.dirname(os.path.abspath(fdk_ct.__file__)))
    env = dict(os.environ, MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert "streamed == one call: True" in out.stdout
    assert "refused: FDK_ERROR_INVALID_ARGUMENT" in out.stdout
    brain = float(out.stdout.split("brain: ")[1].split()[0])
    assert abs(brain - 0.004) < 0.0004
