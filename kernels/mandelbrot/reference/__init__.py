"""The reference orbit in arbitrary precision: its engines, period stop, caches, nuclei."""
