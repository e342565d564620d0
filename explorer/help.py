"""The Help menu's pages: every key of the window (the same table as docs/USAGE.md's "In the
window", which a test keeps equal) and a short guide for a first session. Plain data and one
dialog: the wheel carries no docs, so the table lives here.
"""
from __future__ import annotations

import html

from PyQt6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout

# (where, action, how): docs/USAGE.md's table row for row ("" where: the same place as above)
KEYS = (
    ("everywhere", "compute on the CPU / on the GPU", "toolbar, or Ctrl+Shift+C / Ctrl+Shift+G"),
    ("", "switch views", "tabs, or Ctrl+1 / Ctrl+2 / Ctrl+3 / Ctrl+4"),
    ("", "show/hide the timing panel", "F9"),
    ("", "this list of keys and a short guide (also the Help menu)", "F1"),
    ("", "quit", "Ctrl+Q on Linux, ⌘Q on macOS (the platform's Quit key), or close the window"),
    ("Mandelbrot zoom", "pan, zoom at the cursor, zoom box, centre here",
     "left-drag, wheel, right-drag (or Shift-drag), double-click"),
    ("", "pan, zoom in / out", "arrow keys, + (or =) / −"),
    ("", "whole set, back to the previous view", "Home, Backspace"),
    ("", "cancel a zoom box being drawn, else a minibrot search, else the frame being computed",
     "Esc"),
    ("", "copy / paste the location (as text)", "Ctrl+C / Ctrl+V (picture focused)"),
    ("", "export a PNG at any size (also File → Export picture…)", "Ctrl+E"),
    ("", "zoom to the minibrot in view (also the side panel's button)", "N"),
    ("", "zoom to the minibrot in a box: then draw the box (right- or Shift-drag)", "Shift+N"),
    ("", "compare float32 with float64 on this view (also the side panel's button)",
     "Ctrl+Shift+F"),
    ("", "deep frames: prove the pixels float64 cannot place (double-double), or mark them (the "
         "default)", "P"),
    ("", "next overlay (none, then each that has a meaning here)", "Ctrl+Shift+O"),
    ("Distance heatmap", "set the reference point", "click the map (a drag pans, the wheel zooms)"),
    ("", "whole world", "Home"),
    ("", "next unit (km, nm, mi)", "U"),
    ("", "GPU strategy host-mesh / broadcast / device-mesh", "Alt+1 / Alt+2 / Alt+3"),
    ("Vector-op throughput", "run the sweep / cancel it", "F5 / Esc"),
    ("", "export the table as CSV / everything as JSON", "Ctrl+E / Ctrl+Shift+E"),
    ("", "hide or show an implementation or a mode",
     "its tick box, or click it in the key under the chart"),
    ("Random numbers & reductions", "run / cancel", "F5 / Esc"),
)

GUIDE = (
    ("What you see", "Four views, one per tab: a Mandelbrot zoom, a distance heatmap, the "
     "throughput of vector operations and random numbers with reductions. Each renders on the "
     "GPU (numba.cuda) or on the CPU (the toolbar's CPU / GPU), and the timing panel on the "
     "right shows where each frame's time went: compute, copies between host and device, "
     "colouring, display."),
    ("The first start", "The kernels are compiled the first time they run (seconds to a "
     "minute, more on a busy machine) and kept on disk: a quick preview is shown meanwhile, and "
     "later starts are fast. The status bar says what is running and for how long."),
    ("Exploring the Mandelbrot set", "Drag to pan, turn the wheel to zoom at the cursor, "
     "right-drag a box to zoom into it, Backspace to go back, Home for the whole set. Pick a "
     "bookmark on the side panel, or press N to zoom to the minibrot in view. Past float64's "
     "digits the view switches to deep zoom by perturbation by itself (the readout names the "
     "number format). Ctrl+E exports a picture at any size; File → Export zoom movie makes a "
     "video of the way in."),
    ("Messages", "Progress shows in the status bar. A result or an error (a minibrot found, a "
     "location that could not be pasted, an export written) stays in a bar over the top of the "
     "views until you close it with ×."),
    ("Without a window", "python main.py --help lists the command line: one picture "
     "(--render), a zoom movie (--movie) and the benchmarks (--bench). The README tells more."),
)


def keys_html() -> str:
    rows = "".join(f"<tr><td><b>{html.escape(w)}</b></td><td>{html.escape(a)}</td>"
                   f"<td>{html.escape(k)}</td></tr>" for w, a, k in KEYS)
    return ("<h3>Keys</h3><p>A view's keys act while its tab is shown; the Mandelbrot picture's "
            "while it has the keyboard focus (click it once).</p><table cellpadding='3'>"
            "<tr><th align='left'>where</th><th align='left'>action</th>"
            f"<th align='left'>how</th></tr>{rows}</table>")


def guide_html() -> str:
    return "<h3>Getting started</h3>" + "".join(
        f"<p><b>{html.escape(title)}.</b> {html.escape(text)}</p>" for title, text in GUIDE)


class HelpDialog(QDialog):
    """The guide and the keys in one scrollable page; `page` "keys" or "guide" comes first."""

    def __init__(self, parent=None, page: str = "keys"):
        super().__init__(parent)
        self.setWindowTitle("GPU Explorer help")
        self.browser = QTextBrowser()
        parts = (keys_html(), guide_html()) if page == "keys" else (guide_html(), keys_html())
        self.browser.setHtml("".join(parts))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.browser)
        lay.addWidget(buttons)
        self.resize(760, 620)
