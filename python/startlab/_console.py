"""Rich consoles for the command-line tools."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

#: Width for output that is not a terminal (a pipe, a file): wide enough that no table column is
#: cut, where rich would otherwise assume 80 columns.
_FILE_WIDTH = 250


def stdout_console() -> Console:
    """A console on stdout: the terminal's width, or wide when stdout is a pipe or a file."""
    from rich.console import Console

    console = Console()
    if not console.is_terminal:
        console = Console(width=_FILE_WIDTH)
    return console
