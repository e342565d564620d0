"""`--newton` for `--render mandelbrot` and `--movie`: before anything renders, the place moves to
the minibrot of the view given by --center/--width (the lowest nucleus period in the disc
inscribed in the view, its nucleus by Newton's method: services.minibrot), and the picture shows
that minibrot (its width, and its iterations unless --iters is given). The period and the nucleus
are printed; no minibrot there is one line and exit status 1, a place that cannot be searched 2.
"""
from __future__ import annotations

from services.requests import DEFAULT_RENDER_SIZE, mandelbrot_request

from .failures import UNUSABLE, USAGE, fail, interrupted


def move_to_minibrot(args, iters_given: bool | None = None) -> int | None:
    """With --newton, set args.center/width (and iters unless `iters_given` on the command line:
    a location file's are for its own view) to the minibrot's view; None to go on, else the exit
    status (the message already printed)."""
    if not getattr(args, "newton", False):
        return None
    # only here: the search loads the deep-zoom kernels (numba), which a plain render never uses
    from services.minibrot import MinibrotNotFound, find_minibrot, view_search
    if iters_given is None:
        iters_given = args.iters is not None
    if args.render is not None and args.render != "mandelbrot":
        return fail(USAGE, "--newton applies only to --render mandelbrot, not "
                           f"--render {args.render}")
    if getattr(args, "formula", None) not in (None, "mandelbrot"):
        return fail(USAGE, f"--newton finds the Mandelbrot set's minibrots; it does not apply "
                           f"to --formula {args.formula}")
    if args.center is None or args.width is None:
        return fail(USAGE, "--newton needs --center X,Y and --width W (or --location FILE): "
                           "the view to look for a minibrot in")
    w, h = args.size or DEFAULT_RENDER_SIZE
    try:        # the place's own checks, as --render makes them: one message for bad input
        req = mandelbrot_request({"center": args.center, "width": args.width,
                                  "iters": args.iters}, w, h, False)
    except ValueError as exc:
        return fail(USAGE, str(exc))
    cx, cy = (p.strip() for p in args.center.split(","))
    try:
        search = view_search(cx, cy, args.width, (w, h), int(req.max_iter))
    except ValueError as exc:
        return fail(USAGE, f"--newton: {exc}")
    from kernels.scheduler import Cancelled, CancelToken

    from .interruptible import run_interruptibly
    from .progress import RenderProgress
    token = CancelToken()
    bar = RenderProgress("zoom to minibrot", fractions=True)

    def progress(item):     # the period's scan, then Newton's steps (a handful, often)
        if item.stage == "period":
            bar.report(0.5 * item.fraction)
        else:
            bar.report(0.5 + 0.5 * min(1.0, (max(item.step, 1) - 1 + item.fraction) / 8))
    try:
        found = run_interruptibly(lambda: find_minibrot(search, token, progress), token,
                                  tick=bar.tick)
    except (KeyboardInterrupt, Cancelled):
        bar.close()
        return interrupted("no minibrot was looked for to the end; nothing was rendered")
    except MinibrotNotFound as exc:
        bar.close()
        return fail(UNUSABLE, f"--newton: {exc}")
    except RuntimeError as exc:         # no gmpy2
        bar.close()
        return fail(UNUSABLE, str(exc))
    bar.close()
    print(f"minibrot: {found.summary()}")
    print(f"nucleus: {found.center_re},{found.center_im}")
    print(f"view: --center {found.center_re},{found.center_im} --width {found.width}"
          + ("" if iters_given else f" --iters {found.iterations}"), flush=True)
    args.center = f"{found.center_re},{found.center_im}"
    args.width = str(found.width)
    if not iters_given:
        args.iters = str(found.iterations)
    return None
