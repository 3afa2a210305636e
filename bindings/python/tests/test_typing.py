"""The package's type hints hold (mypy over src/fdk_ct, as a user's checker
would read them through py.typed)."""
import os
import subprocess
import sys

import pytest

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "fdk_ct")


def test_mypy_finds_no_errors():
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.skip("skipped: mypy not installed (Debian: python3-mypy)")
    out = subprocess.run([sys.executable, "-m", "mypy", "--ignore-missing-imports",
                          "--no-incremental", "--cache-dir", os.devnull, SRC],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert os.path.isfile(os.path.join(SRC, "py.typed"))
