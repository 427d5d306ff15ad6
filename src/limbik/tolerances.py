"""Default tolerances and epsilons, in one place.

Lengths are relative to the problem's own scale (a chain's total length, a limb's
reach) unless a name says otherwise, so the same defaults work for metres,
centimetres and CMU units.
"""

from __future__ import annotations

#: Below this norm a direction vector is treated as zero (float64, unitless).
EPS_DIRECTION = 1e-12

#: Relative slack when deciding if a two-bone target is reachable.
REACH_RTOL = 1e-12

#: Default reach tolerance of iterative solvers, relative to the chain length.
ITERATIVE_RTOL = 1e-6

#: Default iteration cap of FABRIK and CCD.
MAX_ITERATIONS = 100

#: Default cap of the Jacobian family.
MAX_JACOBIAN_ITERATIONS = 300

#: A reached flag is set when the end effector is within this distance of the
#: target, relative to the limb's total length (analytic solvers).
ANALYTIC_REACH_RTOL = 1e-9

#: Tolerance for "is this quaternion of unit norm" checks.
UNIT_QUATERNION_ATOL = 1e-6

#: Default iteration cap of multi-effector FABRIK trees: sub-bases placed at
#: centroids converge more slowly than chains when branches pull apart.
MAX_TREE_ITERATIONS = 1000

#: Default orientation tolerance (radians) of iterative solvers with pose targets.
ITERATIVE_ANGLE_TOL = 1e-6

#: Default DLS damping λ of the Jacobian family, relative to the chain's reach.
JACOBIAN_DAMPING = 0.05

#: Default largest change of one joint coordinate in one Jacobian step (rad or length).
JACOBIAN_MAX_STEP = 0.5

#: Steps without a 0.1 % error drop before a Jacobian or CCD attempt is abandoned.
JACOBIAN_PATIENCE = 20

#: CCD's motion cost, relative to the reach (``chain.reach``, or a point chain's length):
#: each CCD update minimises the squared error plus the squared move of a point this far
#: (times the reach) from the joint's axis or pivot. A joint whose lever on the end is
#: well above it takes its best angle as in classic CCD; one with a far shorter lever
#: (a wrist roll next to the wrist's singular pose, its axis nearly through the tip;
#: an end folded back onto its pivot) turns only a little instead of to the far side of
#: its circle for a small gain, so a smooth target path gets smooth joints.
CCD_DAMPING = 0.02

#: Default random restarts of the joint-space solvers (tried only while unreached).
JACOBIAN_RESTARTS = 10

#: After a warm start (``q0``) that does not reach its target, a restart that does not
#: reach it either is charged this much error (times the chain's reach) per radian, or
#: length unit, of its largest joint move from the warm start: it replaces the warm
#: start's best effort only when its error plus that charge is smaller, so tracking keeps
#: to its branch beyond reach unless another branch is better by more than the jump costs.
WARM_START_JUMP_COST = 0.05

#: A joint translation read from a file counts as animated (kept beside the rest
#: offset) when it leaves the offset by more than this, relative to the skeleton's
#: largest offset: exporters' float32 round-off (1e-7 relative) stays below it.
ANIMATED_TRANSLATION_RTOL = 1e-5
#: Aim: the aim axis counts as on its target when within this angle (rad).
AIM_ANGLE_TOL = 1e-10
#: Levenberg–Marquardt steps without halving the squared error before a restart.
LM_PATIENCE = 3
#: Default random restarts of Levenberg–Marquardt: its attempts are short (a stalled
#: one gives way after ``LM_PATIENCE`` steps), so it affords more of them.
LM_RESTARTS = 30
