"""The runtime that graph-building code calls (``__ac`` in the rewritten source): ``api`` is the
module the generated code imports; ``calls`` (call sites), ``conversions`` (Python's number
builtins on traced scalars) and ``regions`` (loops and branches kept as regions) serve it."""
