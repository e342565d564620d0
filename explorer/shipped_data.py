"""The data files the app ships (bookmarks, coastline): where they are, however the app was installed.

They live in explorer/resources/ and travel inside the package (pyproject.toml lists them as
package data), so a wheel or a plain `pip install .` has them just as a source checkout does.
`importlib.resources` finds them beside the installed package instead of a path relative to the
repository.
"""
from __future__ import annotations

from importlib import resources

FOLDER = "resources"


def shipped_file(name: str) -> str:
    """The path of the shipped data file `name` (e.g. "bookmarks.json").

    The app reads its files with open() and os.path, so this is a file-system path: packages
    installed by pip are folders on disk (an app imported from a zip archive is not supported).
    The file may be missing (a broken install); the readers report that in plain words."""
    return str(resources.files(__package__).joinpath(FOLDER, name))
