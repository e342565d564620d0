"""A start that never aborts (issue 24): before Qt loads, the platform plugin's libraries and the
display are checked; what is missing is named in one line (with its packages) and the command
exits 1 instead of Qt's SIGABRT (134). Also the words of install hints, and how the program names
itself."""
import os
import socket
import subprocess
import sys

import pytest

from cli import display
from cli.environment import display_problem
from kernels.extras import install_hint

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# ldd's output on a Debian 12 where libxcb-icccm4 and libxcb-keysyms1 are not installed (the
# report's machine), plus a library no table knows
LDD_MISSING = """\
\tlinux-vdso.so.1 (0x00007ffc2c3f1000)
\tlibQt6XcbQpa.so.6 => /venv/PyQt6/Qt6/lib/libQt6XcbQpa.so.6 (0x00007f0c1e000000)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxcb-cursor.so.0 => /lib/x86_64-linux-gnu/libxcb-cursor.so.0 (0x00007f0c1dff0000)
\tlibxcb-icccm.so.4 => not found
\tlibweird-thing.so.3 => not found
"""


def free_display_number() -> int:
    """An X display number nothing listens on here (no socket, no TCP port)."""
    for n in range(77, 200):
        if not os.path.exists(f"/tmp/.X11-unix/X{n}"):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", 6000 + n)) != 0:
                    return n
    pytest.skip("no free X display number")


def test_missing_libraries_are_read_from_ldd_once_each_in_order():
    assert display.missing_libraries(LDD_MISSING) == [
        "libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libweird-thing.so.3"]
    assert display.missing_libraries("\tlibc.so.6 => /lib/libc.so.6 (0x1)\n") == []


def test_missing_library_message_names_debian_and_fedora_packages():
    msg = display.missing_message("xcb", display.missing_libraries(LDD_MISSING))
    assert "\n" not in msg
    assert "sudo apt-get install libxcb-icccm4 libxcb-keysyms1;" in msg
    assert "sudo dnf install xcb-util-wm xcb-util-keysyms" in msg
    # one the table does not know is named by its soname, with how to find its package
    assert "libweird-thing.so.3" in msg and "apt-file search libweird-thing.so.3" in msg
    # the packages that are there are not asked for
    assert "libxcb-cursor0" not in msg


@pytest.mark.skipif(display.plugin_path("xcb") is None, reason="PyQt6's xcb plugin is not here")
def test_window_problem_from_fake_ldd_output(monkeypatch):
    """The xcb plugin's libraries come from ldd on PyQt6's own plugin: fed the report's output,
    the start names exactly those packages, whether or not the display answers."""
    seen = []

    def fake_ldd(path):
        seen.append(path)
        return LDD_MISSING
    with socket.socket() as server:      # a display that answers
        server.bind(("127.0.0.1", 0))
        server.listen()
        env = {"DISPLAY": f"127.0.0.1:{server.getsockname()[1] - 6000}"}
        msg = display_problem(env, "linux", ldd=fake_ldd)
    assert seen and seen[0].endswith(".so") and "libqxcb" in os.path.basename(seen[0])
    assert msg.startswith("the window cannot open: Qt's xcb platform plugin needs libraries")
    assert "libxcb-icccm4 libxcb-keysyms1" in msg and "does not answer" not in msg


def test_a_display_that_points_nowhere_is_named():
    n = free_display_number()
    msg = display.x_display_problem(f":{n}")
    assert msg == (f"DISPLAY=:{n} does not answer: no X server listens at /tmp/.X11-unix/X{n}")
    assert "port" in display.x_display_problem(f"127.0.0.1:{n}")
    assert "not an X display name" in display.x_display_problem("nonsense")
    full = display_problem({"DISPLAY": f":{n}"}, "linux", ldd=lambda p: "")
    assert full.startswith(f"the window cannot open: DISPLAY=:{n} does not answer")
    assert "--render" in full


def test_a_wayland_socket_that_answers_opens_the_window(tmp_path):
    path = str(tmp_path / "wayland-7")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(path)
        server.listen()
        env = {"WAYLAND_DISPLAY": "wayland-7", "XDG_RUNTIME_DIR": str(tmp_path)}
        assert display_problem(env, "linux", ldd=lambda p: "") is None
    os.unlink(path)
    msg = display_problem(env, "linux", ldd=lambda p: "")
    assert "WAYLAND_DISPLAY=wayland-7 does not answer" in msg


@pytest.mark.skipif(sys.platform != "linux", reason="the display check runs on Linux")
def test_stale_display_is_one_line_and_exit_1_not_an_abort():
    """DISPLAY=:N with no X server: Qt would abort with SIGABRT (134); the start says why in one
    line and exits 1 before Qt loads."""
    n = free_display_number()
    env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["DISPLAY"] = f":{n}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))
    r = subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), "--backend", "cpu"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("main.py: error: the window cannot open: ")
    assert f"DISPLAY=:{n} does not answer" in r.stderr


def test_install_hints_follow_how_the_app_was_installed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert install_hint("movie", checkout=False) == "pip install 'gpu-explorer[movie]'"
    assert install_hint(checkout=False) == "pip install gpu-explorer"
    monkeypatch.setattr(sys, "prefix", str(tmp_path / ".venv"))
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    monkeypatch.chdir(tmp_path)
    assert install_hint("movie", root=str(tmp_path)) == ".venv/bin/pip install -e '.[movie]'"
    assert install_hint(root=str(tmp_path)) == ".venv/bin/pip install -e ."
    # asked from another folder: where to run it
    monkeypatch.chdir(ROOT)
    assert install_hint("cluster", root=str(tmp_path)).endswith(f"(in {tmp_path})")


def test_this_checkout_is_recognised():
    from kernels import extras
    assert extras.checkout_root() == ROOT
    assert "install -e '.[pycuda]'" in install_hint("pycuda")


def test_the_hints_printed_come_from_install_hint(monkeypatch):
    """Every hint the app prints is worded by install_hint (kernels, services alike)."""
    from kernels.spread import cluster
    from services import video
    monkeypatch.setitem(sys.modules, "av", None)
    monkeypatch.setitem(sys.modules, "distributed", None)
    assert install_hint("movie") in video.pyav_missing()
    assert install_hint("cluster") in cluster.dask_missing()
