"""Experiments of the paced_start paper (docs/REPRODUCTION.md)."""

from __future__ import annotations
