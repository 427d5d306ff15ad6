"""Shared fixtures: seeded generators and the optional shared data folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))


def _kernel_cache_dir() -> str:
    """A Numba cache folder for this exact source of limbik.

    Numba's cache checks only the source file of the kernel it loads, so a kernel that
    calls compiled helpers from another module would keep their old machine code after
    an edit there. The tests run on a cache named by a digest of every limbik module, so
    an edit anywhere compiles again (an installed package never changes)."""
    import hashlib
    import tempfile

    import limbik

    digest = hashlib.sha256()
    for path in sorted(Path(limbik.__file__).parent.rglob("*.py")):
        digest.update(path.read_bytes())
    return str(Path(tempfile.gettempdir()) / f"limbik-numba-{digest.hexdigest()[:16]}")


# before Numba is imported, which reads it once
os.environ.setdefault("NUMBA_CACHE_DIR", _kernel_cache_dir())

settings.register_profile(
    "limbik", deadline=None, max_examples=100,
    suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("limbik")

#: The repository's sibling folder of real data (BVH clips, URDFs), if present; the
#: environment variable LIMBIK_SHARED_DATA points elsewhere (a checkout in a subfolder).
SHARED_DATA = Path(os.environ.get("LIMBIK_SHARED_DATA")
                   or Path(__file__).resolve().parents[1].parent / "shared" / "data")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder not found at {SHARED_DATA}")
    return SHARED_DATA


#: The Franka Panda URDF, relative to SHARED_DATA.
PANDA_URDF = "urdf/panda_example-robot-data.urdf"


@pytest.fixture(scope="session")
def panda():
    """The Panda arm ``panda_link0`` → ``panda_hand_tcp`` (7 dof); skips without shared data."""
    from limbik import load_urdf

    path = SHARED_DATA / PANDA_URDF
    if not path.is_file():
        pytest.skip(f"shared data folder not found at {SHARED_DATA}")
    return load_urdf(path, "panda_link0", "panda_hand_tcp")
