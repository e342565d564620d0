"""Where the user left the views, kept between runs: the Mandelbrot place (as the location text
Copy location writes, every digit a deep zoom needs) and the distance map's reference point.
Read defensively, as every saved value is: one that cannot be used is dropped with a note and the
view starts where it always did."""
from __future__ import annotations

import math

from PyQt6.QtCore import QSettings

MANDELBROT_KEY = "mandelbrot/place"
DISTANCE_KEY = "distance/reference"
MAX_TEXT = 200_000          # a place of more characters than this is not one the app wrote


def save(settings: QSettings, views: dict) -> None:
    """Keep the views' places (called as the window closes)."""
    mandelbrot = views.get("mandelbrot")
    if mandelbrot is not None:
        try:
            settings.setValue(MANDELBROT_KEY, mandelbrot.model.location_text())
        except (ValueError, ArithmeticError):   # never expected: the camera is checked
            settings.remove(MANDELBROT_KEY)
    distance = views.get("distance")
    if distance is not None:
        lat, lon = distance.ref
        settings.setValue(DISTANCE_KEY, f"{lat!r},{lon!r}")


def restore(settings: QSettings, views: dict, notes: list[str]) -> None:
    """Put the views back where they were left (before they are first shown)."""
    mandelbrot = views.get("mandelbrot")
    text = _text(settings, MANDELBROT_KEY)
    if mandelbrot is not None and text is not None:
        why = _restore_place(mandelbrot, text)
        if why:
            settings.remove(MANDELBROT_KEY)
            notes.append(f"The saved Mandelbrot place could not be used ({why}): the view "
                         "starts at the whole set")
    distance = views.get("distance")
    text = _text(settings, DISTANCE_KEY)
    if distance is not None and text is not None:
        ref = _lat_lon(text)
        if ref is None:
            settings.remove(DISTANCE_KEY)
            notes.append("The saved distance reference point could not be read: the map starts "
                         "from the usual one")
        elif tuple(ref) != tuple(distance.ref):      # where it starts anyway: nothing to do
            distance.set_reference(*ref)


def _text(settings: QSettings, key: str) -> str | None:
    v = settings.value(key)
    return v if isinstance(v, str) and 0 < len(v) <= MAX_TEXT else None


def _restore_place(view, text: str) -> str | None:
    """None when the view went there, else why not."""
    model = view.model
    try:
        loc = model.place_from_text(text)
    except (ValueError, ArithmeticError) as exc:
        return str(exc)
    s = model.camera.state
    if (loc.iterations is None and (loc.center_re, loc.center_im, loc.width)
            == (s.center_re, s.center_im, s.width)):
        return None                 # the view starts there anyway
    if not view.go_to(loc.center_re, loc.center_im, loc.width, loc.iterations):
        return model.camera.refusal or "refused"
    return None


def _lat_lon(text: str) -> tuple[float, float] | None:
    try:
        lat, lon = (float(v) for v in text.split(","))
    except ValueError:
        return None
    if not (math.isfinite(lat) and math.isfinite(lon) and -90 <= lat <= 90 and abs(lon) <= 1e4):
        return None
    return lat, lon
