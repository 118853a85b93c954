"""Hypothesis strategies shared by the tests."""

from hypothesis import strategies as st

epsilons = st.floats(min_value=0.0, max_value=4.0, allow_nan=False)
positive_epsilons = st.floats(min_value=0.01, max_value=4.0, allow_nan=False)
deltas = st.floats(min_value=0.0, max_value=0.6, allow_nan=False)
constraint = st.tuples(epsilons, deltas)
constraint_lists = st.lists(constraint, min_size=1, max_size=4)
