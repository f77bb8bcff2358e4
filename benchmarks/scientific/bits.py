"""Checksums over bytes: CRC-32 with Python-int bit operations (bitwise and table driven), Adler-32."""

from __future__ import annotations

import numpy as np

from .kernel import Kernel


def crc32_bitwise(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= int(byte)
        for _ in range(8):
            if crc & 1:
                crc = (crc >> 1) ^ 0xEDB88320
            else:
                crc >>= 1
    return crc ^ 0xFFFFFFFF


def crc32_table(data):
    table = np.zeros(256, dtype=np.int64)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        table[i] = c
    crc = 0xFFFFFFFF
    for i in range(data.shape[0]):
        crc = (crc >> 8) ^ int(table[(crc ^ int(data[i])) & 0xFF])
    return ~crc & 0xFFFFFFFF


def adler32(data):
    a = 1
    b = 0
    for i in range(data.shape[0]):
        a = (a + int(data[i])) % 65521
        b = (b + a) % 65521
    return (b << 16) | a


# -- inputs -------------------------------------------------------------------------------------


def bytes_inputs(rng, n):
    return (rng.integers(0, 256, n).astype(np.uint8),)


KERNELS = [
    Kernel("crc32_bitwise", "bits", crc32_bitwise, bytes_inputs, (16, 2000, 100_000)),
    Kernel("crc32_table", "bits", crc32_table, bytes_inputs, (16, 2000, 200_000)),
    Kernel("adler32", "bits", adler32, bytes_inputs, (16, 5000, 500_000)),
]
