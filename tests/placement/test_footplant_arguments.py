"""footplant on inputs that parse fine but make no sense: a named error, never a traceback."""

from __future__ import annotations

import dataclasses

import pytest

import limbik
from limbik.errors import InvalidInputError
from limbik.placement.walk import walk_cycle


@pytest.fixture(scope="module")
def clip() -> limbik.Motion:
    return walk_cycle(cycles=1)


def test_zero_frames(clip):
    empty = dataclasses.replace(clip, root_positions=clip.root_positions[:0],
                                rotations=clip.rotations[:0],
                                joint_translations={k: v[:0] for k, v in
                                                    clip.joint_translations.items()})
    with pytest.raises(InvalidInputError, match="at least one frame") as info:
        limbik.footplant(empty)
    assert info.value.argument == "motion"


@pytest.mark.parametrize("frame_time", [1e-320, 1e-300, 1e-9, 1e308, 1e5])
def test_absurd_frame_times(clip, frame_time):
    with pytest.raises(InvalidInputError, match="frame_time") as info:
        limbik.footplant(dataclasses.replace(clip, frame_time=frame_time))
    assert info.value.argument == "motion"


@pytest.mark.parametrize(("kwargs", "argument"), [
    ({"terrain": "x"}, "terrain"),
    ({"terrain": 3}, "terrain"),
    ({"weights": "a"}, "weights"),
    ({"weights": {"left": "a"}}, "weights['left']"),
    ({"weights": {"middle": 1.0}}, "weights"),
    ({"weights": True}, "weights"),
    ({"weights": 2.0}, "weights"),
    ({"contacts": [1, 2]}, "contacts"),
    ({"contacts": {"left": 5}}, "contacts"),
    ({"contacts": {"left": "abc"}}, None),
    ({"contacts": {"left": [(1,)]}}, None),
    ({"contacts": {"up": [(1, 2)]}}, "contacts"),
    ({"contact_height": float("nan")}, "contact_height"),
    ({"contact_height": -1.0}, "contact_height"),
    ({"contact_height": "1"}, "contact_height"),
    ({"lock_feet": "yes"}, "lock_feet"),
    ({"adjust_pelvis": 1}, "adjust_pelvis"),
    ({"legs": [1, 2]}, "legs"),
    ({"legs": "LR"}, "legs"),
    ({"legs": []}, "legs"),
    ({"progress": 5}, "progress"),
])
def test_bad_arguments_name_themselves(clip, kwargs, argument):
    with pytest.raises(InvalidInputError) as info:
        limbik.footplant(clip, **kwargs)
    if argument is not None:
        assert info.value.argument == argument
        assert argument.split("[")[0] in str(info.value)


def test_good_arguments_still_work(clip):
    planted, _ = limbik.footplant(clip, limbik.Terrain.flat(0.0), weights={"left": 0.5},
                                  contacts={"left": [(0, 10)]}, lock_feet=True)
    assert planted.num_frames == clip.num_frames


@pytest.mark.parametrize("bone", ["thigh", "shin"])
def test_a_leg_bone_of_zero_length_is_named(clip, bone):
    """A leg whose thigh or shin has no length cannot be solved: the error names the leg
    and the bone (it gave NaN, then an error about an internal signal)."""
    import numpy as np

    from limbik.skeleton.limbs import find_legs

    leg = next(leg for leg in find_legs(clip.skeleton) if leg.side == "left")
    joint = leg.knee if bone == "thigh" else leg.ankle
    offsets = np.array(clip.skeleton.offsets)
    offsets[joint] = 0.0
    skeleton = limbik.Skeleton(clip.skeleton.names, clip.skeleton.parents, offsets,
                               channels=clip.skeleton.channels)
    broken = dataclasses.replace(clip, skeleton=skeleton)
    with pytest.raises(InvalidInputError, match=f"left leg must have bones of non-zero "
                       f"length, got a {bone}") as caught:
        limbik.footplant(broken)
    assert caught.value.argument == "motion"
