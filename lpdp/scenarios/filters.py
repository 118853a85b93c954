"""Scenario kinds for privacy filters (registered as they are implemented)."""

from __future__ import annotations
