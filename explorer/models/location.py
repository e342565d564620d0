"""Locations as text the user can copy, paste and share: services.location_text's parser and
formatter, shared with the command line's --location FILE (one reader for both)."""
from services.location_text import (
    EXAMPLE,
    MAX_TEXT_CHARS,
    Location,
    format_location,
    location_from_values,
    parse_location,
    width_text,
)

__all__ = ["EXAMPLE", "MAX_TEXT_CHARS", "Location", "format_location", "location_from_values",
           "parse_location", "width_text"]
