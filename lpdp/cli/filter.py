"""``lpdp filter``: parameters, audits and simulations of realisation-level privacy filters."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``lpdp filter`` (its sub-commands are added as they are implemented)."""
    p = sub.add_parser("filter", help="realisation-level privacy filters",
                       description="Parameters, audits and simulations of privacy filters.")
    p.add_subparsers(dest="filter_command", required=True)
