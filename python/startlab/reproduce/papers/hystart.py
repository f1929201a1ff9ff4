"""Experiments of the hystart paper (docs/REPRODUCTION.md)."""

from __future__ import annotations
