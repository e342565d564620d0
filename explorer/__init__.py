"""The Qt layer of GPU Explorer: widgets over Qt-free view models. It computes no pixels and keeps
no compute state: views build frozen requests (through the services layer) and display typed
results.

- app: the main window (tabs, menus, the backend switch, closing).
- views/: one widget per view (Mandelbrot, distance heatmap, throughput, random numbers) and its
  parts; models/ holds their Qt-free view models.
- scheduler_qt: the thin adapter that turns the scheduler's events into a Qt signal.
- timing_panel, timing_breakdown: the kernel-versus-copy panel and the phases that add up in it.
- info_bar, errors, persisted: a note that stays, unexpected errors in a dialog, what is kept
  between runs (read defensively).
- shipped_data: where the data the app ships (the top-level resources/) is found.
- ui_bench: the window's frame-rate bench (`--bench --ui`).

May import: PyQt6, pyqtgraph, kernels (requests, results, the scheduler) and the services layer
(requests, view ids, files, export and movie jobs). Never cli. Nothing imports explorer except
main.py.
"""
