"""The runner's side of the peers: find the side environment, start one worker per peer, read its
report.

The side environment (``setup.sh``, ``make peers``) is ``$ASTCOMPILER_PEERS_ENV`` or
``~/.cache/astcompiler-peers``; its ``lib/pythonX.Y/site-packages`` must match the running
python's version. A peer that is absent yields a report with status ``"not installed"`` and the
install hint, never an error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

HERE = Path(__file__).resolve().parent
WORKER = HERE / "worker.py"
ENV_VAR = "ASTCOMPILER_PEERS_ENV"
DEFAULT_ENV = Path.home() / ".cache" / "astcompiler-peers"
LABELS = {"jax": "jax.jit", "torch": "torch.compile"}
INSTALL_HINT = ("install the peers with `make peers` (benchmarks/peers/setup.sh: a side venv with "
                "jax[cpu] and torch; see docs/benchmarks.md)")
WORKER_SCHEMA = "astcompiler-bench-peer/1"
OK, NOT_INSTALLED, ERROR = "ok", "not installed", "error"


@dataclass
class PeerTiming:
    """One workload as a worker measured it: NumPy and the peer in the same process."""

    name: str
    input: str
    unit: str
    numpy_s: Optional[float]
    peer_s: Optional[float]
    first_call_s: Optional[float]
    note: Optional[str]


@dataclass
class PeerReport:
    """What became of one peer: its status, versions, one-time start-up and its timings."""

    key: str
    label: str
    status: str  # OK, NOT_INSTALLED or ERROR
    detail: str = ""
    version: Optional[str] = None
    numpy_version: Optional[str] = None
    startup_s: Optional[float] = None
    settings: dict[str, Any] = field(default_factory=dict)
    results: dict[str, PeerTiming] = field(default_factory=dict)


def env_dir(given: Optional[str] = None) -> Path:
    """The side environment: ``given``, else ``$ASTCOMPILER_PEERS_ENV``, else the default."""
    text = given or os.environ.get(ENV_VAR)
    return Path(text).expanduser() if text else DEFAULT_ENV


def site_packages(env: Path) -> list[Path]:
    """The environment's site-packages for this python's version (empty when there is none)."""
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    return [path for path in (env / "lib" / version / "site-packages",) if path.is_dir()]


def not_installed(key: str, why: str) -> PeerReport:
    return PeerReport(key, LABELS[key], NOT_INSTALLED, detail=f"{why}; {INSTALL_HINT}")


def parse_report(key: str, data: Any) -> PeerReport:
    """A worker's JSON report as a ``PeerReport``; ValueError when it is not one."""
    if not isinstance(data, dict) or data.get("schema") != WORKER_SCHEMA:
        raise ValueError(f"not a peer report (schema {WORKER_SCHEMA!r} expected)")
    status = data.get("status")
    if status not in (OK, NOT_INSTALLED, ERROR):
        raise ValueError(f"unknown status {status!r}")
    results = {}
    for item in data.get("results", []):
        timing = PeerTiming(name=str(item["name"]), input=str(item["input"]),
                            unit=str(item["unit"]), numpy_s=_seconds(item, "numpy_s"),
                            peer_s=_seconds(item, "peer_s"),
                            first_call_s=_seconds(item, "first_call_s"),
                            note=item.get("note"))
        results[timing.name] = timing
    detail = str(data.get("detail") or "")
    if status == NOT_INSTALLED:
        detail = f"{detail}; {INSTALL_HINT}" if detail else INSTALL_HINT
    return PeerReport(key, str(data.get("label") or LABELS.get(key, key)), status, detail,
                      data.get("version"), data.get("numpy_version"),
                      _seconds(data, "startup_s"), dict(data.get("settings") or {}), results)


def _seconds(item: dict, name: str) -> Optional[float]:
    value = item.get(name)
    if value is None:
        return None
    if not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"{name} is {value!r}, not a duration")
    return float(value)


def worker_command(key: str, names: list[str], sites: list[Path], out: Path, quick: bool,
                   repeats: int, min_time: float) -> list[str]:
    """The command line of one worker: the project's python, the side site-packages appended."""
    command = [sys.executable, str(WORKER), "--peer", key, "--only", ",".join(names),
               "--repeats", str(repeats), "--min-time", str(min_time), "--out", str(out)]
    for site in sites:
        command += ["--site", str(site)]
    return command + (["--quick"] if quick else [])


def run_peer(key: str, names: list[str], env: Path, quick: bool, repeats: int, min_time: float,
             scratch: str, cache_dir: Optional[str] = None, timeout: float = 1800.0
             ) -> PeerReport:
    """Run one peer's worker over ``names`` and read its report.

    ``scratch`` is a directory for the report and, unless ``cache_dir`` is given, torch.compile's
    inductor cache (a fresh one gives cold first-call times, like astcompiler's fresh cache
    directory); with ``cache_dir`` the inductor cache is ``cache_dir/torchinductor``, kept.
    """
    sites = site_packages(env)
    if not sites:
        return not_installed(key, f"no side environment for python{sys.version_info[0]}."
                                  f"{sys.version_info[1]} at {env}")
    handle, name = tempfile.mkstemp(prefix=f"peer-{key}-", suffix=".json", dir=scratch)
    os.close(handle)
    out = Path(name)
    inductor = os.path.join(cache_dir or scratch, "torchinductor")
    child_env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=inductor)
    command = worker_command(key, names, sites, out, quick, repeats, min_time)
    try:
        done = subprocess.run(command, env=child_env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return PeerReport(key, LABELS[key], ERROR, detail=f"worker ran past {timeout:.0f} s")
    try:
        return parse_report(key, json.loads(out.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as err:
        tail = (done.stderr or "").strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        return PeerReport(key, LABELS[key], ERROR, detail=f"worker failed: {tail[0][:200]} "
                                                           f"({type(err).__name__})")
