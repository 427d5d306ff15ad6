"""Per-frame rigs: objects that keep state between frames and are stepped with ``dt``.

The seeds run IK inside a game loop (``RenderStepped``, ``TweenService``). These rigs
do the same from any plain loop, with no engine::

    rig = TwoBoneRig(rest, smooth_time=0.1)
    for t in times:
        sol = rig.step(1 / 60, target_at(t))

- :class:`TwoBoneRig`: a two-bone limb with target, pole, weight and smoothing.
- :class:`FabrikChainRig`, :class:`FabrikTreeRig`: FABRIK warm-started from the last frame.
- :class:`FootPlanter`: seed 000's foot-planting loop for one leg (raycast, solve, tween).
- :class:`CriticallyDamped`, :class:`Tween`, :class:`TweenedFrame`, :class:`TweenInfo`:
  the smoothing and tweening they are built from.
"""

from limbik.rigs.fabrik import FabrikChainRig, FabrikTreeRig
from limbik.rigs.foot_planter import FootPlanter
from limbik.rigs.limb import TwoBoneRig
from limbik.rigs.smoothing import CriticallyDamped
from limbik.rigs.tween import Tween, TweenedFrame, TweenInfo, ease

__all__ = [
    "CriticallyDamped",
    "FabrikChainRig",
    "FabrikTreeRig",
    "FootPlanter",
    "Tween",
    "TweenInfo",
    "TweenedFrame",
    "TwoBoneRig",
    "ease",
]
