"""`--location FILE` on the command line: the place in a .kfr file or our location text becomes
the --center/--width/--iters/--formula the mode would otherwise be given (services.location_file reads and
checks the file), so --render and --movie build their requests exactly as from those options."""
from __future__ import annotations


def apply_location(args, size) -> str | None:
    """Set args.center, args.width and (unless --iters or --formula was given) args.iters and
    args.formula from the file args.location for a picture of `size`; the one-line problem when
    it cannot, else None."""
    from services.location_file import location_options
    try:
        opts = location_options(args.location, size, center=args.center, width=args.width,
                                iters=args.iters, formula=getattr(args, "formula", None))
    except ValueError as exc:
        text = str(exc)
        return text if text.startswith("--location") else f"--location: {text}"
    args.center, args.width, args.iters = opts["center"], opts["width"], opts["iters"]
    args.formula = opts["formula"]
    return None
