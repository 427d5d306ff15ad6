"""Analytic two-bone limbs: the law-of-cosines solve (compiled), its input pose, weights
and rotations."""
