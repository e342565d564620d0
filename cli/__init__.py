"""The command-line layer: argument parsing (`args`), the headless commands (`render`, `poster`,
`movie`, `bench`) with their progress bars on the terminal and their exit codes. The work itself
(requests from places, files, posters, movies) is the services layer's. Qt-free (`--render` and
`--bench` never load Qt); may import `kernels` and `services`, never `explorer`.
"""
