"""Bench-only code: deep-zoom workloads and places, published locations, bench launches."""
