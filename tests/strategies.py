"""Hypothesis strategies shared by the tests."""

from hypothesis import strategies as st

epsilons = st.floats(min_value=0.0, max_value=4.0, allow_nan=False)
positive_epsilons = st.floats(min_value=0.01, max_value=4.0, allow_nan=False)
deltas = st.floats(min_value=0.0, max_value=0.6, allow_nan=False)
constraint = st.tuples(epsilons, deltas)
constraint_lists = st.lists(constraint, min_size=1, max_size=4)

# Well-conditioned instances: ε on a 0.01 grid and δ on a 0.001 grid, so distinct constraint lines are
# never nearly parallel (their crossing points are ill-conditioned: vertices move by ~1e-16/Δε).
grid_constraint = st.tuples(st.integers(0, 400).map(lambda i: i / 100),
                            st.integers(0, 600).map(lambda i: i / 1000))
grid_constraint_lists = st.lists(grid_constraint, min_size=1, max_size=4)
