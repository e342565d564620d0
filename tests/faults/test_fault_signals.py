"""SIGTERM (kill, systemd, a closing terminal session) handled as Ctrl+C is (issue 24): --render
keeps an earlier file and leaves no temporary file, --bench writes the JSON of what finished, both
end with one line and status 143 (128 + SIGTERM); the window closes as its close button would,
its layout and tab saved."""
import json
import os
import re
import signal

from test_fault_cli import BENCH_CHILD, RENDER_CHILD
from test_fault_window import WINDOW_CHILD


def test_sigterm_during_a_render_keeps_the_earlier_file_and_no_temp_file(child, tmp_path):
    out = tmp_path / "deep.npy"
    out.write_bytes(b"the earlier picture")
    c = child(RENDER_CHILD, args=(str(out), "cpu", "640x480"))
    c.wait_for_line("render started")
    c.proc.send_signal(signal.SIGTERM)
    stdout, stderr = c.finish(60)
    assert c.proc.returncode == 143, stderr
    assert stderr.strip() == f"main.py: terminated (SIGTERM): nothing was written to {out}"
    assert out.read_bytes() == b"the earlier picture"
    assert [p for p in os.listdir(tmp_path) if p.endswith(".tmp")] == []


def test_sigterm_during_the_bench_writes_what_finished(child, tmp_path):
    out = tmp_path / "bench.json"
    c = child(BENCH_CHILD, args=(str(out), "both"))
    c.wait_for_line("second workload started")
    c.proc.send_signal(signal.SIGTERM)
    stdout, stderr = c.finish(60)
    assert c.proc.returncode == 143, stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1
    assert "terminated (SIGTERM): 1 result(s) kept" in stderr and "marked partial" in stderr
    report = json.loads(out.read_text())
    assert report["partial"] is True
    assert [r["workload"] for r in report["results"]] == ["fault-quick"]
    assert [p for p in os.listdir(tmp_path) if p.endswith(".tmp")] == []


def test_sigterm_closes_the_window_with_its_layout_and_tab_saved(child, tmp_path):
    ini = tmp_path / "settings.ini"
    c = child(WINDOW_CHILD, args=(str(ini), "cpu", "plain"))
    c.wait_for_line("ready")
    c.proc.send_signal(signal.SIGTERM)
    stdout, stderr = c.finish(60)
    assert c.proc.returncode == 0, stderr
    assert "exited 0" in stdout and "Traceback" not in stderr
    text = ini.read_text()
    # Qt quotes a value whose bytes hold a comma: either form is the saved layout
    assert re.search(r'^geometry="?@ByteArray\(', text, re.M)
    assert re.search(r'^windowState="?@ByteArray\(', text, re.M)
    assert "view=mandelbrot" in text
