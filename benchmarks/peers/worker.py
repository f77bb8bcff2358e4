#!/usr/bin/env python3
"""Time one peer (``jax.jit`` or ``torch.compile``) against NumPy in this process.

    python benchmarks/peers/worker.py --peer torch --only softmax,tiny --out report.json \\
        --site ~/.cache/astcompiler-peers/lib/python3.11/site-packages

Started by ``benchmarks/run.py``, one process per peer: the peers' thread pools would slow numba's
kernels if they shared a process, so each process times NumPy itself and the table compares
speedups over NumPy measured in the same process. ``--site`` directories are APPENDED to
``sys.path``: the project's NumPy wins over the one the peers brought. Every peer result is checked
against NumPy's before it is timed; a wrong one is reported, never timed. The report is JSON
(``WORKER_SCHEMA``) written to ``--out``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any, Callable, Optional  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)

from benchtools import check_result, medians, short_error  # noqa: E402

WORKER_SCHEMA = "astcompiler-bench-peer/1"


class Peer:
    """One peer compiler: how to load it, compile a formulation, and move arrays in and out."""

    key = ""
    label = ""
    module = ""  # the module whose presence means "installed"

    def installed(self) -> bool:
        """Whether the peer's module can be found (without importing it)."""
        import importlib.util

        return importlib.util.find_spec(self.module) is not None

    def names(self) -> tuple[str, ...]:
        """The workloads this peer has a formulation for."""
        from peers.formulations import NAMES

        return NAMES

    def load(self) -> str:
        """Import the peer (ImportError when it is not installed); returns its version."""
        raise NotImplementedError

    def formulations(self) -> dict[str, Callable]:
        """Workload name -> the workload in the peer's array API."""
        raise NotImplementedError

    def compile(self, fn: Callable) -> Callable:
        """The peer's compiled ``fn``; calling it returns only once the result is computed."""
        raise NotImplementedError

    def to_native(self, args: tuple) -> tuple:
        """The workload's NumPy inputs as the peer's arrays (not timed)."""
        return args

    def to_numpy(self, result: Any) -> Any:
        """A peer result as NumPy arrays (a tuple stays a tuple)."""
        return result

    def warm_up(self) -> None:
        """Compile and run a trivial function: the one-time cost of the first compile."""
        import numpy as np

        self.compile(lambda x: x + 1.0)(*self.to_native((np.ones(4),)))

    def describe(self) -> dict[str, Any]:
        """Settings that shape the peer's timings (threads, flags), for the report."""
        return {}


class JaxPeer(Peer):
    key, label, module = "jax", "jax.jit", "jax"

    def load(self) -> str:
        import jax

        jax.config.update("jax_enable_x64", True)  # float64 workloads stay float64
        self.jax = jax
        return jax.__version__

    def formulations(self) -> dict[str, Callable]:
        import jax.numpy as jnp

        from peers.formulations import jax_formulations

        return jax_formulations(jnp)

    def compile(self, fn: Callable) -> Callable:
        jitted, block = self.jax.jit(fn), self.jax.block_until_ready

        def run(*args: Any) -> Any:  # jax dispatches asynchronously: wait for the result
            return block(jitted(*args))
        return run

    def to_native(self, args: tuple) -> tuple:
        import numpy as np

        return tuple(self.jax.device_put(a) if isinstance(a, np.ndarray) else a for a in args)

    def to_numpy(self, result: Any) -> Any:
        import numpy as np

        if isinstance(result, (tuple, list)):
            return tuple(np.asarray(r) for r in result)
        return np.asarray(result)

    def describe(self) -> dict[str, Any]:
        return {"devices": [str(d) for d in self.jax.devices()], "x64": True}


class TorchPeer(Peer):
    key, label, module = "torch", "torch.compile", "torch"

    def load(self) -> str:
        import torch

        self.torch = torch
        return torch.__version__

    def formulations(self) -> dict[str, Callable]:
        from peers.formulations import torch_formulations

        return torch_formulations(self.torch)

    def compile(self, fn: Callable) -> Callable:
        return self.torch.compile(fn)  # inductor, CPU: synchronous

    def to_native(self, args: tuple) -> tuple:
        import numpy as np

        return tuple(self.torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args)

    def to_numpy(self, result: Any) -> Any:
        if isinstance(result, (tuple, list)):
            return tuple(r.numpy() for r in result)
        return result.numpy()

    def describe(self) -> dict[str, Any]:
        return {"threads": self.torch.get_num_threads(), "backend": "inductor"}


PEERS: dict[str, type[Peer]] = {"jax": JaxPeer, "torch": TorchPeer}


@dataclass
class Prepared:
    """One workload's inputs, NumPy's result and NumPy's time, taken before the peer is loaded."""

    workload: Any
    inputs: tuple
    expected: Any
    entry: dict[str, Any]


def time_numpy(workload: Any, quick: bool, repeats: int, min_time: float) -> Prepared:
    """Inputs (seed 0, as in the runner), NumPy's result and NumPy's median time."""
    import numpy as np

    from workloads import describe_inputs

    inputs = workload.make_inputs(np.random.default_rng(0), quick)
    expected = workload.fn(*inputs)
    workload.fn(*inputs)  # warm-up
    (numpy_s,) = medians([(workload.fn, inputs)], repeats, min_time)
    entry = {"name": workload.name, "input": describe_inputs(inputs), "unit": workload.unit,
             "numpy_s": numpy_s, "peer_s": None, "first_call_s": None, "note": None}
    return Prepared(workload, inputs, expected, entry)


def time_peer(peer: Peer, prepared: Prepared, fn: Callable, repeats: int,
              min_time: float) -> dict[str, Any]:
    """Compile, first call, check against NumPy's result, then time the peer."""
    entry = dict(prepared.entry)
    native = peer.to_native(prepared.inputs)
    try:
        compiled = peer.compile(fn)
        start = time.perf_counter()
        result = compiled(*native)
        entry["first_call_s"] = time.perf_counter() - start
        problem = check_result(peer.to_numpy(result), prepared.expected)
    except Exception as err:  # a benchmark reports, it does not fail
        entry["note"] = f"error: {short_error(err)}"
        return entry
    if problem:
        entry["note"] = f"mismatch: {problem}"
        return entry
    compiled(*native)  # one more warm-up: page in outputs, settle caches
    (entry["peer_s"],) = medians([(compiled, native)], repeats, min_time)
    return entry


def run_peer(peer: Peer, workloads: list[Any], quick: bool, repeats: int,
             min_time: float) -> dict[str, Any]:
    """The worker's report for ``peer`` over those of ``workloads`` it has a formulation for.

    NumPy is timed first, before the peer is imported: a peer's idle thread pool slows NumPy's
    BLAS and ufunc loops when the two are interleaved on a small machine.
    """
    import numpy as np

    report: dict[str, Any] = {"schema": WORKER_SCHEMA, "peer": peer.key, "label": peer.label,
                              "status": "ok", "detail": "", "version": None,
                              "numpy_version": np.__version__, "startup_s": None,
                              "settings": {}, "results": []}
    if not peer.installed():
        report.update(status="not installed", detail=f"no module named {peer.module!r}")
        return report
    chosen = [w for w in workloads if w.name in peer.names()]
    prepared = []
    for workload in chosen:
        print(f"[{peer.label}] NumPy {workload.name} ...", file=sys.stderr, flush=True)
        prepared.append(time_numpy(workload, quick, repeats, min_time))
    try:
        report["version"] = peer.load()
        start = time.perf_counter()
        peer.warm_up()
        report["startup_s"] = time.perf_counter() - start
        forms = peer.formulations()
        report["settings"] = peer.describe()
    except Exception as err:
        report.update(status="error", detail=short_error(err))
        return report
    for item in prepared:
        print(f"[{peer.label}] {item.workload.name} ...", file=sys.stderr, flush=True)
        report["results"].append(time_peer(peer, item, forms[item.workload.name], repeats,
                                           min_time))
    return report


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="benchmarks/peers/worker.py",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--peer", required=True, choices=sorted(PEERS))
    parser.add_argument("--only", default="", help="comma-separated workload names (default all)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--min-time", type=float, default=0.02)
    parser.add_argument("--site", action="append", default=[],
                        help="a site-packages directory to append to sys.path (repeatable)")
    parser.add_argument("--out", required=True, help="where to write the JSON report")
    return parser.parse_args(argv)


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    for site in args.site:
        if site not in sys.path:
            sys.path.append(site)  # after the project's own packages: its NumPy wins
    import workloads

    wanted = {name for name in args.only.split(",") if name}
    chosen = [w for w in workloads.WORKLOADS if not wanted or w.name in wanted]
    report = run_peer(PEERS[args.peer](), chosen, args.quick, args.repeats, args.min_time)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
