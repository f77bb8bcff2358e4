"""Benchmark peers (``jax.jit``, ``torch.compile``), each timed in its own process.

``setup.sh`` installs them into a side virtual environment; ``worker.py`` runs in a child process
with the project's python and that environment's site-packages appended to ``sys.path``;
``launch.py`` is the runner's side (find the environment, start a worker, read its report);
``formulations.py`` holds the workloads written for each peer.
"""
