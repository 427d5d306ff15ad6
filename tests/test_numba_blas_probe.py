"""A limbik kernel's first compilation does not import scipy.linalg for Numba's BLAS
probe, and compiled code that needs BLAS still finds it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

CHILD = r"""
import importlib.util, json, sys
import numpy as np
import limbik
limbik.two_bone(np.zeros(3), np.array([0.3, 0.2, 0.1]), 0.3, 0.25)
after_solve = "scipy.linalg" in sys.modules
from numba import njit
import numba.np.arraymath as arraymath

@njit
def correlate(a, b):
    return np.correlate(a, b)

out = {"scipy_linalg_after_solve": after_solve,
       "have_blas": arraymath._HAVE_BLAS,
       "scipy_installed": importlib.util.find_spec("scipy") is not None,
       "correlate": correlate(np.arange(4.0), np.ones(2)).tolist()}
if out["scipy_installed"]:
    @njit
    def dot(a, b):
        return np.dot(a, b)
    out["dot"] = float(dot(np.arange(3.0), np.arange(3.0)))
print(json.dumps(out))
"""


def _child(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                          text=True, timeout=300, check=True)
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("cache", ["empty", "filled"])
def test_no_scipy_linalg_for_a_kernel_and_blas_still_works(tmp_path, cache):
    """Compiling (empty cache) or loading (filled) a kernel leaves scipy.linalg unloaded;
    the probe's answer matches the installed packages; np.correlate and (with SciPy)
    np.dot compile and give the right numbers afterwards."""
    if cache == "filled":
        _child(tmp_path)
    out = _child(tmp_path)
    assert out["scipy_linalg_after_solve"] is False
    assert out["have_blas"] is out["scipy_installed"]
    assert out["correlate"] == [1.0, 3.0, 5.0]
    if out["scipy_installed"]:
        assert out["dot"] == 5.0
