"""The services layer: what both front ends (the command line, cli/, and the window, explorer/)
need, without Qt. Requests from places with the one number-format rule (`requests`), the renderer
that draws them (kernels.mandelbrot.jobs), files written atomically (`files`), one frame into a
file (`render`), Kalles Fraktaler locations (`kfr`), location text and files (`location_text`,
`location_file`, for --location and the window), KF's benchmark locations as workloads
(`kf_bench`), where the shipped data is (`shipped_data`), the view ids (`views`), posters in bands
(`poster`), movies (`movie`, `movie_parts`, `movie_writer`, `video`, `movie_reference`: one
reference orbit per movie), the parts folders both resume from (`parts`), and the window's export
jobs (`export_jobs`, `movie_jobs`).

May import `kernels`; never `cli`, `explorer`, PyQt6 or pyqtgraph.
"""
