#!/usr/bin/env python3
"""GPU Explorer: `python main.py` opens the window; --render, --movie and --bench run headless
without Qt.

The command line lives in cli/ (parsing, the headless commands, terminal progress, exit codes) over
the services layer (services/), and neither imports Qt. This file only dispatches, and is the one
place that reaches for the Qt app: the window and the window's frame-rate bench (`--bench --ui`).
docs/CLI.md lists the options. Ctrl+C ends any mode with one line (the bench keeps what it
measured; the window closes as its close button would); SIGTERM does the same, with status 143.
"""
from __future__ import annotations

import sys


def main(argv=None) -> int:
    from cli.serve_client import remember_environment
    remember_environment()      # what a render server compares (cli/serve_client.py)
    from cli.environment import plain_numba_messages
    plain_numba_messages()      # before numba loads: no stray ESC[0m on the terminal at exit
    if argv is None:            # the command line's, not a test's: a render server may take it
        argv = sys.argv[1:]     # (cli/serve_client.py)
        from cli.serve_client import forward, wants_server
        if wants_server(argv):
            try:
                code = forward(argv)
            except KeyboardInterrupt:   # before the server took it: nothing began
                from cli.failures import interrupted
                return interrupted()
            if code is not None:
                return code
    try:
        return _main(argv)
    except KeyboardInterrupt:   # anywhere the commands do not handle it themselves (imports…)
        from cli.failures import interrupted
        return interrupted()


def _main(argv) -> int:
    from cli.args import mode_error, parse
    from cli.failures import UNUSABLE, USAGE, fail, resolve_backend
    args = parse(argv)
    # every option is checked against the mode before anything starts
    problem = mode_error(args)
    if problem:
        return fail(USAGE, problem)
    window = not (args.render or args.movie or args.bench or args.serve)
    if window:
        from cli.environment import display_problem
        no_display = display_problem()
        if no_display:      # Qt would abort the process (xcb) rather than say so
            return fail(UNUSABLE, no_display)
        from cli.render_start import open_context_ahead
        open_context_ahead(args.backend)    # while numba imports for the backend's probe
    else:
        from cli.failures import handle_sigterm
        handle_sigterm()    # kill/systemd: work kept and temporary files removed, as on Ctrl+C
        if args.render:     # its GPU context opens on a thread while numba imports (issue 38)
            from cli.render_start import start_render
            start_render(args)
    # before any module with kernels is imported: numba refuses to define them when it has no
    # folder for their cache (tests/cli/test_read_only_install.py checks every mode)
    from cli.environment import ensure_numba_cache
    cache_note = ensure_numba_cache()
    if cache_note and not window:
        from cli.failures import note
        note(cache_note)
    if args.render:
        from cli.render import run_render
        return run_render(args)
    if args.serve:
        from cli.serve import run_serve
        return run_serve(args)
    if args.movie:
        from cli.movie import run_movie
        return run_movie(args)
    if args.bench:
        from cli.bench import run_bench, run_window_bench
        return run_window_bench(args, _window_bench) if args.ui else run_bench(args)
    be, why = resolve_backend(args.backend)
    if be is None:
        return fail(UNUSABLE, why)
    from explorer.app import run
    return run(args.backend, args.view, notes=[cache_note] if cache_note else ())


def _window_bench(backend_name: str, seconds: float, size: tuple[int, int]) -> dict:
    from explorer.ui_bench import run_ui_bench  # Qt: loaded only for --bench --ui
    return run_ui_bench(backend_name, seconds=seconds, size=size)


if __name__ == "__main__":
    from cli.quick_exit import as_program, finish
    as_program()
    sys.exit(finish(main()))
