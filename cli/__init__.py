"""The command-line layer: argument parsing, requests from strings, writing PNG/NPY files and the
bench table. Qt-free (`--render` and `--bench` never load Qt); may import `kernels`, never `explorer`.
"""
