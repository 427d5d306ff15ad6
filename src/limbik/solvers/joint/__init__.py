"""Joint-space solvers on a JointChain: the Jacobian family (Levenberg–Marquardt,
transpose, pseudo-inverse, DLS, SVD-DLS) and CCD's joint-space driver."""
