"""What every command module of the CLI shares: the one-line failure with its exit code, and the
checks of a scenario argument."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

import startlab


class Failure(click.ClickException):
    """A failure reported as one line on stderr with its own prefix and exit code."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code

    def show(self, file: Any = None) -> None:
        click.echo(self.message, err=True)


def scenario_file(path: str) -> Path:
    """The scenario argument as an existing file, or a bad-input failure."""
    file = Path(path)
    if not file.is_file():
        raise Failure(f"error: {path}: no such scenario file", 2)
    return file


@contextmanager
def naming(path: str) -> Iterator[None]:
    """Prefix the message of a refused scenario with its file name."""
    try:
        yield
    except startlab.ScenarioError as e:
        raise startlab.ScenarioError(f"{path}: {e}") from e
