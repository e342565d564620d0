"""The data files the app ships (bookmarks, coastline, Kalles Fraktaler's benchmark locations):
where they are, however the app was installed.

They live in the top-level resources/ folder of the repository. A wheel carries that folder as
the package explorer.resources (pyproject.toml maps it and lists its files as package data), so
an installed app finds them in explorer/resources/ beside this package; a source checkout, or an
editable install that runs the checkout's own packages, finds them in resources/.
"""
from __future__ import annotations

from pathlib import Path

FOLDER = "resources"
# the package the wheel puts the folder in (pyproject.toml's package-dir)
PACKAGE = "explorer"


def shipped_folder() -> str:
    """The folder that holds the shipped data files: the installed package's explorer/resources/
    when there is one (a wheel), else the checkout's resources/ beside this package. Found by
    path, not by importing explorer: the command line and services never load the window."""
    top = Path(__file__).resolve().parent.parent
    installed = top / PACKAGE / FOLDER
    if installed.is_dir():
        return str(installed)
    return str(top / FOLDER)


def shipped_file(name: str) -> str:
    """The path of the shipped data file `name` (e.g. "bookmarks.json").

    The app reads its files with open() and os.path, so this is a file-system path: packages
    installed by pip are folders on disk (an app imported from a zip archive is not supported).
    The file may be missing (a broken install); the readers report that in plain words."""
    return str(Path(shipped_folder()) / name)
