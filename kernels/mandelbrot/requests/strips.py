"""How a picture larger than one frame is cut into strips of whole rows: the one strip size that
exports, `--render` and the bands of a poster over several GPUs share, so a poster's bands are the
strips `--render` would cut."""

# pixels per strip: at most 12 bytes each on the device (value + colour)
STRIP_PIXELS = 4 * 2 ** 20


def strip_rows(width: int, rows: int | None = None) -> int:
    """Rows per strip for a picture `width` pixels wide, or `rows` when the caller chose it (checked:
    at least 1)."""
    rows = int(rows) if rows is not None else max(1, STRIP_PIXELS // max(1, int(width)))
    if rows < 1:
        raise ValueError(f"strips need at least 1 row each, got {rows}")
    return rows
