"""The benchmark peers (``benchmarks/peers/``) and the runner's table, JSON and chart.

No timing is asserted and neither torch nor jax is needed: fake peers exercise the worker's result
check, a missing side environment yields "not installed" rows. The real peers run only where the
side environment exists (``make peers``), marked slow.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable
from unittest import mock

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
RUN_PY = BENCH / "run.py"
WORKER_PY = BENCH / "peers" / "worker.py"


def load(path: Path, name: str) -> ModuleType:
    """Import a benchmarks script as a module, leaving this process' environment as it was."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    with mock.patch.dict(os.environ):  # the scripts set OMP_WAIT_POLICY & co. at import
        spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def run() -> ModuleType:
    return load(RUN_PY, "bench_run")


@pytest.fixture(scope="module")
def worker(run: ModuleType) -> ModuleType:
    return load(WORKER_PY, "bench_peer_worker")


@pytest.fixture(scope="module")
def launch(run: ModuleType) -> ModuleType:
    return run.launch


def workload(name: str) -> Any:
    import workloads

    return next(w for w in workloads.WORKLOADS if w.name == name)


def fake_peer(worker: ModuleType, forms: dict[str, Callable], module: str = "numpy") -> Any:
    """A peer that 'compiles' by returning the NumPy function it is given."""

    class Fake(worker.Peer):
        key, label = "fake", "fake.jit"

        def load(self) -> str:
            return "0.0"

        def names(self) -> tuple[str, ...]:
            return tuple(forms)

        def formulations(self) -> dict[str, Callable]:
            return forms

        def compile(self, fn: Callable) -> Callable:
            return fn

    Fake.module = module
    return Fake()


# -- the runner's arguments -----------------------------------------------------------------------


def test_parse_args_defaults_and_outputs(run: ModuleType) -> None:
    args = run.parse_args([])
    assert (args.peers, args.json, args.chart, args.repeats, args.min_time) == (
        "auto", None, None, 9, 0.02)
    args = run.parse_args(["--quick", "--json", "out.json", "--chart", "out.png",
                           "--peers-env", "/x"])
    assert (args.json, args.chart, args.peers_env, args.repeats) == ("out.json", "out.png",
                                                                     "/x", 3)


@pytest.mark.parametrize("argv, keys", [
    ([], ["jax", "torch"]),
    (["--quick"], []),
    (["--quick", "--peers", "all"], ["jax", "torch"]),
    (["--peers", "none"], []),
    (["--peers", "torch"], ["torch"]),
])
def test_requested_peers(run: ModuleType, argv: list[str], keys: list[str]) -> None:
    assert run.requested_peers(run.parse_args(argv)) == keys


def test_unknown_peer_is_an_argument_error(run: ModuleType) -> None:
    with pytest.raises(SystemExit) as info:
        run.parse_args(["--peers", "tensorflow"])
    assert info.value.code == 2


# -- missing peers --------------------------------------------------------------------------------


def test_missing_side_environment_is_not_installed(launch: ModuleType, tmp_path: Path) -> None:
    report = launch.run_peer("jax", ["tiny"], tmp_path / "absent", True, 1, 0.001, str(tmp_path))
    assert report.status == launch.NOT_INSTALLED
    assert report.label == "jax.jit"
    assert "make peers" in report.detail and str(tmp_path / "absent") in report.detail
    assert report.results == {}


def test_env_dir_order(launch: ModuleType, tmp_path: Path) -> None:
    with mock.patch.dict(os.environ, {launch.ENV_VAR: str(tmp_path)}):
        assert launch.env_dir() == tmp_path
        assert launch.env_dir("/given") == Path("/given")
    with mock.patch.dict(os.environ, clear=True):
        assert launch.env_dir() == launch.DEFAULT_ENV


def ms_row(run: ModuleType, name: str = "softmax", unit: str = "ms") -> Any:
    """A row as run_workload leaves it: NumPy 10 s, numba (hand) 5 s, astcompiler 4 s."""
    row = run.Row(name, "4x4 f32", unit)
    for label, median in ((run.NUMPY, 10.0), (run.HAND, 5.0), (run.AC, 4.0)):
        row.impls[label] = run.Impl(label, median=median, baseline=10.0, compile_s=0.5)
    return row


def test_not_installed_rows_say_so_with_the_hint(run: ModuleType, launch: ModuleType,
                                                 tmp_path: Path, capsys: Any) -> None:
    reports = [launch.run_peer(key, ["softmax"], tmp_path / "absent", True, 1, 0.001,
                               str(tmp_path)) for key in ("jax", "torch")]
    row = ms_row(run)
    run.add_peers([row], reports)
    notes: dict[str, list[str]] = {}
    assert run.format_cell(row.impls[run.JAX], row, notes) == "not installed [1]"
    assert run.format_cell(row.impls[run.TORCH], row, notes) == "not installed [2]"
    run.print_table([row])
    out = capsys.readouterr().out
    assert "[1] jax.jit: not installed:" in out and "make peers" in out
    best = run.fastest_peer(row)
    assert best.label == run.HAND  # a peer that is not installed is never the fastest


def test_worker_reports_a_missing_module(worker: ModuleType) -> None:
    peer = fake_peer(worker, {"tiny": workload("tiny").fn}, module="no_such_peer_module")
    report = worker.run_peer(peer, [workload("tiny")], True, 1, 0.001)
    assert report["status"] == "not installed"
    assert report["results"] == []


def test_worker_cli_without_peer_site_is_not_installed(launch: ModuleType,
                                                       tmp_path: Path) -> None:
    if importlib.util.find_spec("jax") is not None:
        pytest.skip("jax is importable from the project's own environment")
    out = tmp_path / "report.json"
    done = subprocess.run([sys.executable, str(WORKER_PY), "--peer", "jax", "--only", "tiny",
                           "--quick", "--out", str(out)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    report = launch.parse_report("jax", json.loads(out.read_text()))
    assert report.status == launch.NOT_INSTALLED and "make peers" in report.detail


# -- the worker's result check --------------------------------------------------------------------


def test_worker_times_a_correct_peer(worker: ModuleType) -> None:
    peer = fake_peer(worker, {"tiny": workload("tiny").fn})
    report = worker.run_peer(peer, [workload("tiny")], True, 1, 0.001)
    assert report["status"] == "ok"
    (entry,) = report["results"]
    assert entry["note"] is None
    assert entry["peer_s"] > 0 and entry["numpy_s"] > 0 and entry["first_call_s"] >= 0


@pytest.mark.parametrize("name, wrong, why", [
    ("tiny", lambda x, y: x * y + 2.0, "values differ"),
    ("tiny", lambda x, y: (x * y + 1.0).astype(np.float32), "dtype float32"),
    ("tiny", lambda x, y: (x * y + 1.0)[:-1], "shape"),
    ("row_stats", lambda x: (x.mean(axis=1), x.var(axis=1), x.argmin(axis=1)), "item 2"),
    ("row_stats", lambda x: [x.mean(axis=1), x.var(axis=1), x.argmax(axis=1)], "list result"),
])
def test_worker_rejects_a_wrong_result(worker: ModuleType, name: str, wrong: Callable,
                                       why: str) -> None:
    report = worker.run_peer(fake_peer(worker, {name: wrong}), [workload(name)], True, 1, 0.001)
    (entry,) = report["results"]
    assert entry["note"].startswith("mismatch: ") and why in entry["note"], entry["note"]
    assert entry["peer_s"] is None  # a wrong result is never timed


def test_worker_reports_a_peer_error(worker: ModuleType) -> None:
    def broken(x, y):
        raise RuntimeError("lowering failed")

    report = worker.run_peer(fake_peer(worker, {"tiny": broken}), [workload("tiny")], True, 1,
                             0.001)
    (entry,) = report["results"]
    assert entry["note"] == "error: RuntimeError: lowering failed"


def test_worker_skips_workloads_without_a_formulation(worker: ModuleType) -> None:
    peer = fake_peer(worker, {"tiny": workload("tiny").fn})
    report = worker.run_peer(peer, [workload("stencil"), workload("tiny")], True, 1, 0.001)
    assert [entry["name"] for entry in report["results"]] == ["tiny"]


# -- the worker's report, parsed by the runner ----------------------------------------------------


def good_report() -> dict[str, Any]:
    return {"schema": "astcompiler-bench-peer/1", "peer": "torch", "label": "torch.compile",
            "status": "ok", "detail": "", "version": "2.0", "numpy_version": "2.4",
            "startup_s": 14.0, "settings": {"threads": 2},
            "results": [{"name": "softmax", "input": "4x4 f32", "unit": "ms", "numpy_s": 10.0,
                         "peer_s": 2.5, "first_call_s": 0.8, "note": None},
                        {"name": "tiny", "input": "8 f64", "unit": "us", "numpy_s": 1e-6,
                         "peer_s": None, "first_call_s": None, "note": "mismatch: shape"}]}


def test_parse_report(launch: ModuleType) -> None:
    report = launch.parse_report("torch", good_report())
    assert (report.status, report.version, report.startup_s) == ("ok", "2.0", 14.0)
    assert report.results["softmax"].peer_s == 2.5
    assert report.results["tiny"].note == "mismatch: shape"


@pytest.mark.parametrize("change", [
    {"schema": "something else"},
    {"status": "great"},
    {"startup_s": -1.0},
    {"results": [{"name": "x", "input": "", "unit": "ms", "numpy_s": "fast", "peer_s": 1.0}]},
])
def test_parse_report_rejects_a_malformed_report(launch: ModuleType, change: dict) -> None:
    with pytest.raises(ValueError):
        launch.parse_report("torch", {**good_report(), **change})


def test_peer_timings_join_the_row(run: ModuleType, launch: ModuleType) -> None:
    report = launch.parse_report("torch", good_report())
    row = ms_row(run)
    run.add_peers([row], [report])
    torch_impl = row.impls[run.TORCH]
    assert torch_impl.speedup() == 4.0  # over the worker's own NumPy time
    assert run.fastest_peer(row) is torch_impl
    assert run.ac_vs_fastest(row) == pytest.approx(1.6)  # 4.0x against astcompiler's 2.5x
    assert run.format_cell(torch_impl, row, {}) == "4.00x"
    assert "stencil" not in report.results
    stencil = ms_row(run, "stencil")
    run.add_peers([stencil], [report])
    assert run.TORCH not in stencil.impls  # no formulation: no cell


def test_microsecond_rows_compare_times(run: ModuleType) -> None:
    row = ms_row(run, "tiny", unit="us")
    row.impls[run.HAND].median = 2e-6
    row.impls[run.AC].median = 3e-6
    assert run.fastest_peer(row).label == run.HAND
    assert run.ac_vs_fastest(row) == pytest.approx(1.5)
    assert run.format_cell(row.impls[run.AC], row, {}) == "3.00 us"


# -- JSON and chart -------------------------------------------------------------------------------


def check_schema(data: dict) -> None:
    """The JSON file's documented schema (docs/benchmarks.md)."""
    assert data["schema"] == "astcompiler-bench/1"
    assert {"date", "machine", "software", "settings", "peers", "workloads", "corpus"} <= set(data)
    assert {"cpus", "usable_cpus", "cpu_model", "load_before", "load_after"} <= set(
        data["machine"])
    for peer in data["peers"].values():
        assert {"label", "status", "detail", "version", "startup_s"} <= set(peer)
    for row in data["workloads"]:
        assert {"name", "title", "input", "unit", "fastest_peer", "ac_vs_fastest",
                "results"} <= set(row)
        for result in row["results"].values():
            assert set(result) == {"median_s", "numpy_s", "speedup", "first_call_s", "note",
                                   "process"}
            assert result["median_s"] is None or result["median_s"] > 0
            assert result["median_s"] is not None or result["note"]


def test_results_json_schema(run: ModuleType, launch: ModuleType, tmp_path: Path) -> None:
    reports = [launch.parse_report("torch", good_report()),
               launch.not_installed("jax", "no side environment")]
    rows = [ms_row(run), ms_row(run, "tiny", unit="us")]
    run.add_peers(rows, reports)
    meta = run.run_meta(run.parse_args([]), [1.0, 1.0, 1.0], {"numpy": np.__version__})
    data = json.loads(json.dumps(run.results_json(rows, [], reports, meta)))
    check_schema(data)
    assert data["peers"]["jax"]["status"] == "not installed"
    assert data["workloads"][0]["results"]["torch.compile"]["speedup"] == 4.0
    assert data["workloads"][0]["fastest_peer"] == "torch.compile"


def test_chart_is_a_png(run: ModuleType, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "chart.png"
    assert run.draw_chart([ms_row(run), ms_row(run, "tiny", unit="us")], str(path)) is None
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_quick_run_writes_json_with_not_installed_peers(tmp_path: Path) -> None:
    """End to end: the runner, astcompiler on ``tiny``, peers requested but not installed."""
    out = tmp_path / "bench.json"
    done = subprocess.run([sys.executable, str(RUN_PY), "--quick", "--only", "tiny", "--peers",
                           "all", "--peers-env", str(tmp_path / "absent"), "--json", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "not installed" in done.stdout and "make peers" in done.stdout
    data = json.loads(out.read_text())
    check_schema(data)
    (row,) = data["workloads"]
    assert row["name"] == "tiny" and row["unit"] == "us"
    assert row["results"]["astcompiler"]["median_s"] > 0, row
    assert {data["peers"][key]["status"] for key in ("jax", "torch")} == {"not installed"}


# -- the real peers (where `make peers` installed them) -------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("key", ["jax", "torch"])
def test_real_peer_runs_and_checks(launch: ModuleType, key: str, tmp_path: Path) -> None:
    env = launch.env_dir()
    sites = launch.site_packages(env)
    if not sites or not (sites[0] / key).is_dir():
        pytest.skip(f"{key} is not installed in {env} (make peers)")
    report = launch.run_peer(key, ["tiny"], env, True, 1, 0.001, str(tmp_path))
    assert report.status == launch.OK, report.detail
    timing = report.results["tiny"]
    assert timing.note is None and timing.peer_s > 0 and timing.numpy_s > 0


def test_baseline_drift_is_reported(run: ModuleType, launch: ModuleType) -> None:
    row = ms_row(run)  # NumPy 10 s here
    run.add_peers([row], [launch.parse_report("torch", good_report())])  # NumPy 10 s there too
    assert run.baseline_drift([row]) == []
    row.impls[run.TORCH].baseline = 5.0
    assert run.baseline_drift([row]) == ["softmax: 10000 ms here, torch.compile 5000 ms"]


# -- the training steps (benchmarks/training.py) --------------------------------------------------


def training_cases() -> list[tuple[Callable, Callable, tuple, tuple]]:
    """(loss, hand-written NumPy step, float64 inputs, argnums) at tiny sizes."""
    import training

    rng = np.random.default_rng(3)
    shapes = [(3, 5), (5, 4), (4,), (4, 2), (2,), (3, 2)]
    mlp = tuple(rng.standard_normal(shape) for shape in shapes)
    norm = tuple(rng.standard_normal(shape) for shape in [(3, 6), (6,), (6,), (3, 6)])
    return [(training.mlp_loss, training.mlp_step_numpy, mlp, training.MLP_PARAMS),
            (training.layernorm_loss, training.layernorm_step_numpy, norm,
             training.LAYERNORM_PARAMS)]


@pytest.mark.parametrize("case", [0, 1], ids=["mlp_step", "layernorm_step"])
def test_hand_written_training_steps_match_finite_differences(run: ModuleType, case: int) -> None:
    from tests.autodiff.fd import numeric_grad

    loss, step, args, argnums = training_cases()[case]
    value, *grads = step(*args)
    assert value == pytest.approx(loss(*args), rel=1e-12)
    assert len(grads) == len(argnums)
    for index, grad in zip(argnums, grads):
        np.testing.assert_allclose(grad, numeric_grad(loss, list(args), index), rtol=1e-6,
                                   atol=1e-8, err_msg=f"argument {index}")


def test_training_step_row_checks_astcompiler_against_the_hand_written_step(
        run: ModuleType) -> None:
    """The ``mlp_step`` row: astcompiler's ``value_and_grad`` step checked, no hand numba."""
    import astcompiler

    args = run.parse_args(["--quick", "--repeats", "1", "--min-time", "0.0001"])
    row = run.run_workload(workload("mlp_step"), args, astcompiler, None, None)
    assert row.impls[run.AC].note is None and row.impls[run.AC].median > 0
    assert row.impls[run.HAND].note == "n/a: none written"
    assert len(row.impls[run.AC].fn.compiled.entries) == 1


@pytest.mark.slow
@pytest.mark.parametrize("key", ["jax", "torch"])
def test_real_peer_training_steps_match_numpy(launch: ModuleType, key: str,
                                              tmp_path: Path) -> None:
    env = launch.env_dir()
    sites = launch.site_packages(env)
    if not sites or not (sites[0] / key).is_dir():
        pytest.skip(f"{key} is not installed in {env} (make peers)")
    names = ["mlp_step", "layernorm_step"]
    report = launch.run_peer(key, names, env, True, 1, 0.001, str(tmp_path))
    assert report.status == launch.OK, report.detail
    for name in names:
        assert report.results[name].note is None, (name, report.results[name].note)
