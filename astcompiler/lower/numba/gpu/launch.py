"""Launch geometry from run-time sizes: one kernel serves every size (dynamic shapes keep one
entry). Grid-stride loops let a small grid cover any size.

``LAUNCH`` holds the settings: threads per block and the most blocks a launch uses. Under numba's
simulator every CUDA thread is a Python thread (about 75 us each), so the defaults there are
tiny; ``ASTCOMPILER_CUDA_THREADS`` / ``ASTCOMPILER_CUDA_BLOCKS`` override both.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .devices import simulator_enabled


@dataclass
class LaunchConfig:
    threads: int  # threads per block (a power of two)
    max_blocks: int  # blocks per launch at most (grid-stride loops cover the rest)


def _default() -> LaunchConfig:
    sim = simulator_enabled()
    threads = int(os.environ.get("ASTCOMPILER_CUDA_THREADS", 4 if sim else 256))
    blocks = int(os.environ.get("ASTCOMPILER_CUDA_BLOCKS", 2 if sim else 4096))
    power = 1
    while power * 2 <= max(threads, 1):  # a power of two: reductions merge in halving steps
        power *= 2
    return LaunchConfig(power, max(blocks, 1))


LAUNCH = _default()


def geometry(total: int, config: LaunchConfig | None = None) -> tuple[int, int]:
    """(blocks, threads per block) for ``total`` elements."""
    config = config or LAUNCH
    threads = config.threads
    blocks = min(max((total + threads - 1) // threads, 1), config.max_blocks)
    return blocks, threads
