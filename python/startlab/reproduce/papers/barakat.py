"""Experiments of the barakat paper (docs/REPRODUCTION.md)."""

from __future__ import annotations
