"""The Qt layer of GPU Explorer: the main window, the views, the timing panel and the thin adapter
that turns the scheduler's events into a Qt signal (scheduler_qt). It computes no pixels and keeps
no compute state: views build frozen requests and display typed results.

May import: PyQt6, pyqtgraph, kernels (requests, results, the scheduler) and cli (view ids, file
writers). Nothing imports explorer except main.py.
"""
