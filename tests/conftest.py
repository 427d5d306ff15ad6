"""Shared fixtures: seeded generators and the optional shared data folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))

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
