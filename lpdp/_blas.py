"""One BLAS thread where lpdp's own work gains nothing from more.

The quadrature audits multiply many small matrices (a few hundred rows): OpenBLAS's threads then cost
more in wake-ups and spinning than they save, and on two cores shared by two sweep workers they
oversubscribe the machine (measured on a 2-core machine under load 2-4: 15.6-58 s per filter-sweep cell
with two OpenBLAS threads, 8.7-10 s with one). The limit is a context, so a caller's own BLAS setting is
restored afterwards; the controller (it inspects every loaded library once, ~10 ms) is made on first use.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any


@functools.cache
def _controller() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the body with BLAS limited to one thread, then restore the previous limits.

    Examples
    --------
    >>> import numpy as np
    >>> from lpdp._blas import one_blas_thread
    >>> with one_blas_thread():
    ...     float(np.ones((3, 3)) @ np.ones(3) @ np.ones(3))
    9.0
    """
    with _controller().limit(limits=1, user_api="blas"):
        yield


def single_blas_thread_process() -> None:
    """Limit BLAS to one thread for the rest of this process (a sweep worker's tasks run one per core)."""
    _controller().limit(limits=1, user_api="blas")
