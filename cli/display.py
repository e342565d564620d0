"""Can the window open here? Checked before Qt loads, because Qt cannot say so itself: a platform
plugin whose libraries are missing, or a DISPLAY that points nowhere, ends the process with
SIGABRT (exit 134) and a message naming the wrong package.

Two checks, both cheap: the platform plugin's own dependencies (`ldd` on PyQt6's libqxcb.so, the
"not found" lines), each missing library named with its Debian/Ubuntu and Fedora package; and the
display's socket (X's /tmp/.X11-unix/XN or TCP port 6000+N, Wayland's socket in XDG_RUNTIME_DIR),
connected to with a short timeout.
"""
from __future__ import annotations

import glob
import importlib.util
import os
import re
import socket
import subprocess

CONNECT_TIMEOUT_S = 2.0
LDD_TIMEOUT_S = 10.0

# soname -> (Debian/Ubuntu package, Fedora package) for the libraries Qt's xcb and wayland
# plugins (and the Qt libraries under them) load; anything else is named by its soname
PACKAGES = {
    "libxcb.so.1": ("libxcb1", "libxcb"),
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb"),
    "libxcb-xinerama.so.0": ("libxcb-xinerama0", "libxcb"),
    "libxcb-xinput.so.0": ("libxcb-xinput0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb"),
    "libxcb-glx.so.0": ("libxcb-glx0", "libxcb"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libX11.so.6": ("libx11-6", "libX11"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libXau.so.6": ("libxau6", "libXau"),
    "libXdmcp.so.6": ("libxdmcp6", "libXdmcp"),
    "libSM.so.6": ("libsm6", "libSM"),
    "libICE.so.6": ("libice6", "libICE"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
    "libGLX.so.0": ("libglx0", "libglvnd-glx"),
    "libOpenGL.so.0": ("libopengl0", "libglvnd-opengl"),
    "libGLdispatch.so.0": ("libglvnd0", "libglvnd"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype"),
    "libpng16.so.16": ("libpng16-16", "libpng"),
    "libharfbuzz.so.0": ("libharfbuzz0b", "harfbuzz"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libgthread-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libwayland-client.so.0": ("libwayland-client0", "libwayland-client"),
    "libwayland-cursor.so.0": ("libwayland-cursor0", "libwayland-cursor"),
    "libwayland-egl.so.1": ("libwayland-egl1", "libwayland-egl"),
}


def plugin_path(name: str) -> str | None:
    """PyQt6's platform plugin `name` (xcb, wayland), found without importing Qt; None when
    PyQt6 or the plugin is not there (the import then says so itself)."""
    try:
        spec = importlib.util.find_spec("PyQt6")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        found = sorted(glob.glob(os.path.join(folder, "Qt6", "plugins", "platforms",
                                              f"libq{name}*.so")))
        if found:
            return found[0]
    return None


def ldd_output(library: str) -> str | None:
    """`ldd library`'s output, or None when ldd cannot tell (not installed, timed out)."""
    try:
        done = subprocess.run(["ldd", library], capture_output=True, text=True,
                              timeout=LDD_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout


def missing_libraries(ldd_text: str) -> list[str]:
    """The sonames ldd reports as "not found", each once, in its order."""
    found = re.findall(r"^\s*(\S+)\s*=>\s*not found", ldd_text or "", re.MULTILINE)
    return list(dict.fromkeys(found))


def missing_message(plugin: str, sonames: list[str]) -> str:
    """One line: what is missing for Qt's `plugin` and the packages that bring it."""
    known = [s for s in sonames if s in PACKAGES]
    unknown = [s for s in sonames if s not in PACKAGES]
    debian = list(dict.fromkeys(PACKAGES[s][0] for s in known))
    fedora = list(dict.fromkeys(PACKAGES[s][1] for s in known))
    parts = []
    if known:
        parts.append(f"Debian/Ubuntu: sudo apt-get install {' '.join(debian)}; "
                     f"Fedora: sudo dnf install {' '.join(fedora)}")
    if unknown:
        parts.append(f"and the packages holding {', '.join(unknown)} (Debian/Ubuntu: "
                     f"apt-file search {unknown[0]}; Fedora: dnf provides '*/{unknown[0]}')")
    # on a bare system ldd finds 25 missing: the packages are what to act on, a few names will do
    shown = ", ".join(sonames) if len(sonames) <= 4 else \
        f"{len(sonames)} libraries: {', '.join(sonames[:3])}, …"
    return (f"Qt's {plugin} platform plugin needs libraries that are not installed ({shown}): "
            f"install them ({'; '.join(parts)})")


def plugin_problem(plugin: str, ldd=ldd_output) -> str | None:
    """Why Qt's `plugin` cannot load here (its missing libraries), or None when it can or when
    that cannot be told (no PyQt6, no ldd: Qt then speaks for itself)."""
    path = plugin_path(plugin)
    if path is None:
        return None
    missing = missing_libraries(ldd(path) or "")
    return missing_message(plugin, missing) if missing else None


def _connects(family, address, timeout: float = CONNECT_TIMEOUT_S) -> bool:
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(address)
        return True
    except OSError:
        return False


def x_display_problem(display: str, timeout: float = CONNECT_TIMEOUT_S) -> str | None:
    """None when something listens at X display `display` (":0", "localhost:10.0",
    "unix:1"), else why not in words."""
    m = re.fullmatch(r"(.*):(\d+)(?:\.\d+)?", display.strip())
    if not m:
        return f"DISPLAY={display} is not an X display name such as :0 or localhost:10.0"
    host, number = m.group(1), int(m.group(2))
    if host in ("", "unix") or host.startswith("/"):
        path = host if host.startswith("/") else f"/tmp/.X11-unix/X{number}"
        # Linux X servers listen on an abstract socket of the same name as well
        if _connects(socket.AF_UNIX, path, timeout) or _connects(socket.AF_UNIX, "\0" + path, timeout):
            return None
        where = f"no X server listens at {path}"
    else:
        if _connects(socket.AF_INET6 if ":" in host else socket.AF_INET,
                     (host.strip("[]"), 6000 + number), timeout):
            return None
        where = f"nothing answers at {host}, port {6000 + number}"
    return f"DISPLAY={display} does not answer: {where}"


def wayland_problem(name: str, environ) -> str | None:
    """None when a Wayland compositor listens at WAYLAND_DISPLAY=`name`, else why not."""
    path = name if os.path.isabs(name) else os.path.join(environ.get("XDG_RUNTIME_DIR", ""), name)
    if _connects(socket.AF_UNIX, path):
        return None
    return f"WAYLAND_DISPLAY={name} does not answer: no compositor listens at {path}"


def window_problem(environ, ldd=ldd_output) -> str | None:
    """Why the window cannot open on the display `environ` names, in one line, or None: the
    window opens when Wayland or X answers and Qt's plugin for it has its libraries."""
    reasons = []
    if environ.get("WAYLAND_DISPLAY"):
        # the plugin's libraries matter only where a compositor answers
        reason = (wayland_problem(environ["WAYLAND_DISPLAY"], environ)
                  or plugin_problem("wayland", ldd))
        if reason is None:
            return None
        reasons.append(reason)
    if environ.get("DISPLAY"):
        x = [x_display_problem(environ["DISPLAY"]), plugin_problem("xcb", ldd)]
        if not any(x):
            return None
        if x[0]:
            x[0] += " (start the X server, or log in with `ssh -X`)"
        # X is what Qt falls back to: its reasons are the ones to fix
        reasons = [r for r in x if r]
    if not reasons:
        return None
    return (f"the window cannot open: {'; and '.join(reasons)}; --render and --bench need no "
            "display")
