"""Options that cannot apply are refused or warned about; defaults that do something."""

from __future__ import annotations

import numpy as np
import pytest

from limbik import two_bone
from limbik.errors import InvalidInputError
from limbik.solvers.two_bone.solver import DEFAULT_MAX_STRETCH


def test_pole_weight_without_a_pole_is_refused():
    pose = np.array([[0.0, 0, 0], [0, -1, 0.1], [0, -2, 0]])
    with pytest.raises(InvalidInputError, match="pole_weight") as caught:
        two_bone(pose[0], [0.5, -1.5, 0], 1.0, 1.0, pose=pose, pole_weight=0.5)
    assert caught.value.argument == "pole_weight"
    with pytest.raises(InvalidInputError, match="pole_weight"):
        two_bone(pose[0], [0.5, -1.5, 0], 1.0, 1.0, pole_weight=0.5)


def test_stretch_stretches_by_default(rng):
    """Up to 1.25 of the limb's length (Unreal's cap), unlike "extend"."""
    assert DEFAULT_MAX_STRETCH == 1.25
    root = np.zeros(3)
    for d in rng.uniform(2.05, 3.5, 40):
        target = np.array([d, 0.0, 0.0])
        stretched = two_bone(root, target, 1.0, 1.0, unreachable="stretch")
        extended = two_bone(root, target, 1.0, 1.0, unreachable="extend")
        reach = np.linalg.norm(stretched.positions[2] - stretched.positions[0])
        assert reach == pytest.approx(min(d, 2.5), rel=1e-12)
        assert bool(stretched.reached) == (d <= 2.5)
        assert float(extended.error) > float(stretched.error)
    explicit = two_bone(root, [3.0, 0, 0], 1.0, 1.0, unreachable="stretch", max_stretch=1.0)
    assert float(explicit.error) == pytest.approx(1.0)
