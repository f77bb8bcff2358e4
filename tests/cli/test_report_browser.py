"""The report page in a real browser: headless Chromium (the OS package) loads it from a file.

``--dump-dom`` gives the DOM after the page's script ran: its self-check (``#selfcheck``) counts
the page's elements and checks that every graph-break link finds its line, and ``#js-errors``
collects ``window.onerror`` reports. ``--screenshot`` must give a PNG of the window's size that
is not blank. Skipped, with the reason, where Chromium is not installed (``.ci/run`` installs it).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest

from astcompiler.report import write_report
from astcompiler.run.trace import load_trace
from tests.helpers import run_process_group

from .test_report import build_trace

CHROMIUM = next((found for name in ("chromium", "chromium-browser", "google-chrome")
                 if (found := shutil.which(name))), None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed (apt-get install -y chromium; .ci/run does)")
WIDTH, HEIGHT = 1000, 1400


def chromium(profile: Path, *args: str) -> subprocess.CompletedProcess:
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--disable-dev-shm-usage", f"--user-data-dir={profile}", *args]
    return run_process_group(command, timeout=120)  # its helper processes die with it


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("browser")
    trace, _ = build_trace(root)
    page = root / "report.html"
    write_report(str(trace), str(page))
    return trace, page


def test_the_page_runs_its_script_without_errors_and_its_elements_exist(report, tmp_path):
    trace, page = report
    done = chromium(tmp_path / "profile", "--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    errors = re.search(r'<pre id="js-errors">(.*?)</pre>', dom, re.S)
    assert errors is not None and errors.group(1) == ""
    check = re.search(r'<div id="selfcheck" data-status="(\w+)">self-check (.*?)</div>', dom)
    assert check is not None, "the page's script did not run"
    result = json.loads(html.unescape(check.group(2)))
    assert check.group(1) == "ok", result
    records = load_trace(str(trace))
    assert result["functions"] == result["index_rows"] == 4
    assert result["compiles"] == len(records) == 5
    assert result["graphs"] == sum(1 for r in records if r["graph"])
    assert result["graph_nodes"] == sum(len(r["graph"]) for r in records)
    assert result["breaks"] == 1 and result["recompiles"] == 1
    assert result["missing_targets"] == [] and result["errors"] == 0
    assert result["timeline_bars"] >= len(records)


def png_pixels(data: bytes) -> tuple[int, int, int, bytes]:
    """(width, height, bytes per pixel, the unfiltered rows) of an 8-bit RGB/RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, colour = header[:4]
    assert depth == 8 and colour in (2, 6), header
    bpp = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(b"".join(chunks)), width * bpp
    rows = np.frombuffer(raw, np.uint8).reshape(height, stride + 1)
    out = np.zeros((height, stride), np.uint8)
    prior = np.zeros(stride, np.uint8)
    for row in range(height):
        kind, line = rows[row, 0], rows[row, 1:].copy()
        if kind == 1:  # Sub: a running sum per channel
            sums = np.cumsum(line.reshape(-1, bpp), axis=0, dtype=np.uint64)
            line = (sums & 255).astype(np.uint8).ravel()
        elif kind == 2:  # Up
            line = line + prior
        elif kind in (3, 4):  # Average, Paeth: left to right
            values, above = line.tolist(), prior.tolist()
            for i in range(stride):
                left = values[i - bpp] if i >= bpp else 0
                up, corner = above[i], above[i - bpp] if i >= bpp else 0
                if kind == 3:
                    values[i] = (values[i] + (left + up) // 2) & 255
                else:
                    p = left + up - corner
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                    values[i] = (values[i] + (left if pa <= pb and pa <= pc else up if pb <= pc
                                              else corner)) & 255
            line = np.array(values, np.uint8)
        out[row] = prior = line
    return width, height, bpp, out.tobytes()


def test_a_screenshot_of_the_page_is_not_blank(report, tmp_path):
    _, page = report
    shot = tmp_path / "report.png"
    done = chromium(tmp_path / "profile", "--hide-scrollbars", f"--window-size={WIDTH},{HEIGHT}",
                    f"--screenshot={shot}", page.as_uri())
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    width, height, bpp, pixels = png_pixels(shot.read_bytes())
    assert (width, height) == (WIDTH, HEIGHT)
    image = np.frombuffer(pixels, np.uint8).reshape(height, width, bpp)[:, :, :3]
    assert (image[:12, :12] == 255).all()  # the page's white margin: the decoding is right
    step = 7  # every 7th pixel is plenty
    sampled = [pixels[i:i + 3] for i in range(0, len(pixels), bpp * step)]
    inked = sum(1 for rgb in sampled if rgb != b"\xff\xff\xff")
    colours = len(set(sampled))
    assert inked / len(sampled) > 0.02, (inked, len(sampled))  # text, tables, the graph
    assert colours > 20  # the phases' colours, highlighted code, anti-aliased text
