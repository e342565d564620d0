"""The views' models: their state and commands, free of any GUI toolkit, so that they
are tested without a window. A widget draws its model and turns input into the model's commands;
the model builds the frozen requests the scheduler runs and tells its observers (plain callbacks)
what changed.

    camera      where the Mandelbrot view looks, and how gestures move it
    location    locations as text (copy/paste, bookmarks' values)
    bookmarks   the bookmark files
    mandelbrot  the Mandelbrot view's model: camera, iterations, colouring, requests, exports
    throughput  the vector-op throughput view's model: sweep settings, results as they arrive,
                table rows, CSV and JSON exports
"""
