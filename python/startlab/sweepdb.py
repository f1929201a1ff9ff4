"""Deprecated alias of :mod:`startlab.sweep.db`: importing it gives that very module."""

from .sweep import _alias

_alias(__name__, "db")
