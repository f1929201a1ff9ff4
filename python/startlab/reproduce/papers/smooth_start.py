"""Experiments of the smooth_start paper (docs/REPRODUCTION.md)."""

from __future__ import annotations
