"""Markers shared by dispatch and the generated run code (cheap to import)."""

MISS = object()  # what a guarded run returns when its guard does not hold
