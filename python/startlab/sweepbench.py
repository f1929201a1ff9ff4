"""Deprecated alias of :mod:`startlab.sweep.bench`: importing it gives that very module."""

from .sweep import _alias

_alias(__name__, "bench")
