"""Where the data the app ships (the top-level resources/) is found: services.shipped_data's
locator, shared with the command line (which never imports the window)."""
from services.shipped_data import FOLDER, shipped_file, shipped_folder

__all__ = ["FOLDER", "shipped_file", "shipped_folder"]
