"""FABRIK: chains and trees with several end effectors, constraints, closing the gap at
the edges of reach."""
