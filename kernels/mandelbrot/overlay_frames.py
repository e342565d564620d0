"""Frames with their overlays' layers kept, as the overlay files beside a picture want them
(services/overlay_files.py). Overlays are a flag of the request that the renderers draw in their
own pipeline (Renderer.render, DeepFrameRenderer.render, with `keep`); these name that call for a
caller that holds either renderer.
"""
from __future__ import annotations

from ..frame import Frame


def float64_frame(renderer, request, cancel=None, keep=()) -> Frame:
    """`renderer` (renderer.Renderer)'s frame of `request` with the layers of `keep` kept."""
    return renderer.render(request, cancel=cancel, keep=keep)


def deep_frame(frames, request, cancel=None, progress=None, keep=()) -> Frame:
    """`frames` (deep_frames.DeepFrameRenderer)'s frame of `request` with the layers of `keep`
    kept."""
    return frames.render(request, cancel=cancel, progress=progress, keep=keep)
