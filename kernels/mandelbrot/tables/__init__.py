"""The bilinear approximation (BLA) tables of a reference orbit, in the loops' flat layout."""
