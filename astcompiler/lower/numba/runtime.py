"""What generated wrappers call at run time besides kernels: NumPy's output layouts, FP status.

* ``k_order`` / ``reduced`` / ``empty``: the memory layout NumPy gives a ufunc's (or a
  reduction's) freshly allocated output (``order="K"``): its axes ordered by the operands'
  strides, C order winning where operands disagree. Wrappers use them only when some input is
  not C-contiguous (then NumPy's result is not C-ordered either: a Fortran-ordered ``F + F`` is
  Fortran-ordered).
* ``fp_clear`` / ``fp_raised``: the floating-point status flags, which NumPy reads after each
  ufunc loop to warn or raise as ``np.seterr`` says. A kernel sets the same flags, so a wrapper
  that finds one whose error mode is not ``"ignore"`` reruns the call with NumPy, which then
  warns or raises exactly as the plain call does.
* ``fp_defer`` / ``fp_raised_under`` / ``fp_undefer``: NumPy steps before such a kernel run with
  their warnings deferred, so that rerun does not repeat them (or put them first).
"""

from __future__ import annotations

import contextvars
import ctypes
import ctypes.util
import platform
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..places import warn_at


class StoreOverflow(OverflowError):
    """Loop code's NumPy error for a scalar stored out of an integer array's bounds (the
    structured runner raises it as NumPy's ``OverflowError``: no rerun, the writes before it
    are NumPy's too)."""


class StoreNaN(ValueError):
    """Loop code's NumPy error for a NaN stored into an integer array (raised as NumPy's
    ``ValueError``)."""


@dataclass(frozen=True)
class Layout:
    """A value computed inside a kernel: its shape and axis order (slowest axis first)."""

    shape: tuple[int, ...]
    order: tuple[int, ...]

    @property
    def strides(self) -> tuple[int, ...]:
        """Element strides of a contiguous array with this axis order."""
        strides = [0] * len(self.shape)
        step = 1
        for axis in reversed(self.order):
            strides[axis] = step
            step *= max(int(self.shape[axis]), 1)
        return tuple(strides)


def _strides_in(value: Any, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """``value``'s strides broadcast to ``shape`` (0 on broadcast and size-1 axes); None: none."""
    if isinstance(value, Layout):
        own_shape, own = value.shape, value.strides
    elif isinstance(value, np.ndarray):
        own_shape, own = value.shape, value.strides
    else:
        return None
    lead = len(shape) - len(own_shape)
    if lead < 0:
        return None
    return (0,) * lead + tuple(0 if size == 1 else abs(s) for size, s in zip(own_shape, own))


def _contiguous(value: Any) -> tuple[bool, bool]:
    """(C-contiguous, Fortran-contiguous), as NumPy's flags say (size-1 axes do not count)."""
    if isinstance(value, np.ndarray):
        return value.flags.c_contiguous, value.flags.f_contiguous
    sized = [a for a in value.order if value.shape[a] != 1]
    return sized == sorted(sized), sized == sorted(sized, reverse=True)


def _trivial_order(shape: tuple[int, ...], operands: tuple) -> tuple[int, ...] | None:
    """NumPy's trivial ufunc loop: every array operand has the output's shape and all are
    C-contiguous (C order) or all Fortran-contiguous (Fortran order)."""
    c = f = True
    for value in operands:
        if not isinstance(value, (np.ndarray, Layout)) or (
                isinstance(value, np.ndarray) and value.ndim == 0):
            continue
        if tuple(value.shape) != shape:
            return None
        vc, vf = _contiguous(value)
        c, f = c and vc, f and vf
    ndim = len(shape)
    if c:
        return tuple(range(ndim))
    if f:
        return tuple(range(ndim - 1, -1, -1))
    return None


def k_order(shape: tuple[int, ...], operands: tuple) -> Layout:
    """NumPy's axis order for a ufunc output of ``shape`` with these operands (``order="K"``).

    The iterator's stable insertion sort of the axes by stride (innermost first), operand by
    operand: the first operand with non-zero strides on both axes decides, except that C order
    wins wherever operands disagree (``npyiter_find_best_axis_ordering``).
    """
    shape = tuple(int(s) for s in shape)
    ndim = len(shape)
    trivial = _trivial_order(shape, operands)
    if trivial is not None:
        return Layout(shape, trivial)
    rows = [s for s in (_strides_in(v, shape) for v in operands) if s is not None]
    strides = np.array(rows, dtype=np.int64).reshape(len(rows), ndim)
    return Layout(shape, tuple(int(a) for a in k_axis_order(shape, strides)))


def k_axis_order(shape: tuple[int, ...], strides: np.ndarray) -> np.ndarray:
    """``k_order``'s axis order (slowest first) from the operands' element strides (one row
    each, 0 on broadcast and size-1 axes). Written for numba too (``loop_layouts``)."""
    ndim = len(shape)
    perm = np.arange(ndim - 1, -1, -1)  # iterator order: the last (C-innermost) axis first
    for i0 in range(1, ndim):
        pos = i0
        axis0 = perm[i0]
        for i1 in range(i0 - 1, -1, -1):
            axis1 = perm[i1]
            ambiguous, swap = True, False
            for row in range(strides.shape[0]):
                s = strides[row]
                if s[axis0] != 0 and s[axis1] != 0:
                    if s[axis1] <= s[axis0]:
                        swap = False
                    elif ambiguous:
                        swap = True
                    ambiguous = False
            if not ambiguous:
                if swap:
                    pos = i1
                else:
                    break
        if pos != i0:
            for k in range(i0, pos, -1):
                perm[k] = perm[k - 1]
            perm[pos] = axis0
    return perm[::-1].copy()


def reduced(source: Any, shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> Layout:
    """A reduction's output keeps its input's axis order (reduced axes dropped, or of size 1)."""
    src_shape = tuple(source.shape)
    order = k_order(src_shape, (source,)).order
    if keepdims:
        return Layout(tuple(shape), order)
    kept = [a for a in order if a not in axes]
    rank = {a: i for i, a in enumerate(sorted(kept))}
    return Layout(tuple(shape), tuple(rank[a] for a in kept))


def copied(shape: tuple[int, ...], source: Any, order: str) -> Layout:
    """The layout of ``np.array(source, copy=True, order=order)``."""
    ndim = len(shape)
    c, f = _contiguous(source)
    fortran = order == "F" or (order == "A" and f and not c)
    return Layout(tuple(shape), tuple(range(ndim - 1, -1, -1)) if fortran else tuple(range(ndim)))


def empty(shape: tuple[int, ...], dtype: Any, layout: Layout) -> np.ndarray:
    """``np.empty`` with ``layout``'s axis order. C and Fortran order own their memory; other
    orders are a transposed C array (NumPy's own result owns its memory: ``.base`` differs)."""
    ndim = len(shape)
    order = layout.order
    if order == tuple(range(ndim)):
        return np.empty(shape, dtype)
    if order == tuple(range(ndim - 1, -1, -1)):
        return np.empty(shape, dtype, order="F")
    inverse = [0] * ndim
    for i, axis in enumerate(order):
        inverse[axis] = i
    return np.empty(tuple(shape[a] for a in order), dtype).transpose(inverse)


# -- floating-point status ------------------------------------------------------------------------

_FE = {"x86_64": (1, 4, 8, 16), "AMD64": (1, 4, 8, 16), "aarch64": (1, 2, 4, 8),
       "arm64": (1, 2, 4, 8)}  # FE_INVALID, FE_DIVBYZERO, FE_OVERFLOW, FE_UNDERFLOW
_CATEGORIES = ("invalid", "divide", "over", "under")


def _libm() -> Any:
    name = ctypes.util.find_library("m")
    try:
        lib = ctypes.CDLL(name) if name else None
        return lib if lib is not None and hasattr(lib, "fetestexcept") else None
    except OSError:
        return None


_LIB = _libm() if platform.machine() in _FE else None
_BITS = _FE.get(platform.machine(), (0, 0, 0, 0))
_ALL = sum(_BITS)
FP_STATUS = _LIB is not None  # False: this platform's flags cannot be read (see fp_raised)
_clear = _LIB.feclearexcept if _LIB is not None else None  # bound once: about 0.2 us a call
_test = _LIB.fetestexcept if _LIB is not None else None
FP_ALL = _ALL
fp_test = _test if _test is not None else (lambda bits: bits)  # nonzero: some flag may be set


# NumPy keeps its error modes in a context variable holding one capsule per np.errstate/np.seterr
# state: while it holds the same capsule, the modes read from it last still hold (a strong
# reference, so the capsule cannot be freed and its identity reused)
_ERRSTATE = getattr(getattr(getattr(np, "_core", None), "umath", None), "_extobj_contextvar", None)
_SEEN: tuple = (None, {}, True, False)  # capsule, np.geterr(), some mode warns, some raises


def _errstate() -> tuple:
    """(capsule, ``np.geterr()``, a mode is not "ignore", a mode is neither "warn" nor
    "ignore"), read again only when the caller's errstate changed (about 0.1 us)."""
    global _SEEN
    state = _ERRSTATE.get() if _ERRSTATE is not None else None
    seen = _SEEN
    if state is not None and state is seen[0]:
        return seen
    modes = np.geterr()
    seen = (state, modes, any(m != "ignore" for m in modes.values()),
            any(m not in ("warn", "ignore") for m in modes.values()))
    _SEEN = seen  # one tuple: threads never see a mixed state
    return seen


def _modes() -> dict:
    return _errstate()[1]


_RECORDING: tuple = (None, {})  # the ``_errstate()`` tuple it was made from, its modes


def recording_modes() -> dict:
    """``np.geterr()`` with every mode but "ignore" turned into "call": the modes of a NumPy
    step's recording handler (``loop_numpy.py``), made again only when the caller's errstate
    changed."""
    global _RECORDING
    seen = _errstate()
    recorded = _RECORDING
    if recorded[0] is seen:
        return recorded[1]
    modes = {kind: "ignore" if mode == "ignore" else "call" for kind, mode in seen[1].items()}
    _RECORDING = (seen, modes)  # one tuple: threads never see a mixed state
    return modes


def fp_clear() -> None:
    """Clear the floating-point exception flags (before the kernels run)."""
    if _LIB is not None:
        _clear(_ALL)


def fp_raised() -> bool:
    """A flag was raised whose ``np.geterr()`` mode is not ``"ignore"``: the plain call would
    warn, raise or call the handler. Without access to the flags: whether any mode is not
    NumPy's default (the caller set ``np.errstate``), since default warnings cannot be told."""
    if _LIB is None:
        modes = _modes()
        return any(modes[c] not in ("warn", "ignore") for c in _CATEGORIES)
    flags = _test(_ALL)
    if not flags:
        return False
    modes = _modes()
    if any(flags & bit and modes[c] != "ignore" for bit, c in zip(_BITS, _CATEGORIES)):
        return True
    _clear(_ALL)  # ignored flags only (underflow): later calls need not look at them again
    return False


_QUIET: tuple = (None, None)  # the caller's errstate capsule seen last, the same with all "ignore"


def fp_defer() -> Any:
    """Before NumPy steps (ufuncs) that a later kernel's flag may send back to NumPy for the
    whole call: the caller's errstate with every mode "ignore" (its bufsize and handler kept),
    so those steps warn nothing yet. NumPy leaves a ufunc's flags set after its loop: the
    wrapper tests them after each such step (``fp_raised_under``) and reruns the call with
    NumPy on the first that warns or raises, which then warns in the plain call's order and
    count. Returns the token for ``fp_undefer``; None: nothing deferred (no flags to read, or
    every mode already ignores). About 0.15 us with ``fp_undefer``."""
    global _QUIET
    if _ERRSTATE is None or _LIB is None:
        return None
    state = _ERRSTATE.get()
    quiet = _QUIET
    if state is not quiet[0]:
        if not _errstate()[2]:  # every mode ignores: nothing to defer
            quiet = (state, None)
        else:
            with np.errstate(all="ignore"):
                quiet = (state, _ERRSTATE.get())
        _QUIET = quiet  # one tuple, as ``_SEEN``: the capsule is held, its identity not reused
    return None if quiet[1] is None else _ERRSTATE.set(quiet[1])


def fp_undefer(token: Any) -> None:
    """The caller's errstate again (``fp_defer``'s token); returns None (no token left)."""
    if token is not None:
        _ERRSTATE.reset(token)
    return None


def _modes_of(capsule: Any) -> dict:
    """``np.geterr()`` under errstate ``capsule`` (``Token.MISSING``: NumPy's default)."""
    seen = _SEEN
    if capsule is seen[0]:
        return seen[1]

    def read() -> dict:
        if capsule is not contextvars.Token.MISSING:
            _ERRSTATE.set(capsule)
        return np.geterr()
    return contextvars.Context().run(read)


def fp_raised_under(token: Any) -> bool:
    """``fp_raised`` while ``fp_defer`` holds the modes at "ignore": a flag the caller's own
    modes (those before ``token``) warn or raise about."""
    if token is None:
        return fp_raised()
    flags = _test(_ALL)
    if not flags:
        return False
    modes = _modes_of(token.old_value)
    if any(flags & bit and modes[c] != "ignore" for bit, c in zip(_BITS, _CATEGORIES)):
        return True
    _clear(_ALL)
    return False


def twin_warned(twin: Any, inputs: tuple, token: Any = None) -> tuple[Any, bool]:
    """A kernel's NumPy twin (``numpy_kernel``) run with nothing reported yet: ``(results,
    True)`` when it would warn, raise or call the errstate handler, or raised (the wrapper then
    reruns the whole call with NumPy, which warns in the plain call's order: the kernel's
    nodes may sit on both sides of a NumPy step that warns), else ``(results, False)``.
    ``token``: ``fp_defer``'s, whose caller's modes count."""
    caller = np.geterr() if token is None else _modes_of(token.old_value)
    modes = {c: "ignore" if m == "ignore" else "raise" for c, m in caller.items()}
    try:
        with warnings.catch_warnings(record=True) as seen, np.errstate(**modes):
            warnings.simplefilter("always")
            results = twin(*inputs)
    except Exception:  # noqa: BLE001 - the rerun raises it again, in the plain call's order
        return None, True
    return results, bool(seen)


_WORDS = {"invalid": "invalid value", "divide": "divide by zero", "over": "overflow",
          "under": "underflow"}


def strict() -> bool:
    """Some ``np.geterr()`` mode raises or calls a handler (the caller set ``np.errstate``), or
    warns while a warnings filter may turn NumPy's RuntimeWarning into an exception: NumPy
    raises before the op's store, so a call that writes its inputs runs with NumPy up front."""
    _, _, warns, raising = _errstate()
    return raising or (warns and warnings_raise())  # (warns, not raising: some mode is "warn")


_FILTERS: tuple = (None, -1, None, False)  # the filter list seen last, its length, first, answer


def warnings_raise() -> bool:
    """Whether some ``warnings`` filter with action ``"error"`` may match a RuntimeWarning
    (any message and module: an over-approximation). Cached while the filter list is the same
    object with the same length and first entry (``catch_warnings`` swaps the list,
    ``simplefilter`` and ``filterwarnings`` insert at its front)."""
    global _FILTERS
    filters = warnings.filters
    first = filters[0] if filters else None
    seen = _FILTERS
    if filters is seen[0] and len(filters) == seen[1] and first is seen[2]:
        return seen[3]
    answer = any(f[0] == "error" and isinstance(f[2], type) and issubclass(RuntimeWarning, f[2])
                 for f in filters)
    _FILTERS = (filters, len(filters), first, answer)  # one tuple, as ``_SEEN``
    return answer


def fp_watch() -> bool:
    """Some ``np.geterr()`` mode is not ``"ignore"``: a flag a kernel raises may warn (NumPy's
    default). A kernel that overwrites its own operands then keeps a copy of what it writes."""
    return _errstate()[2]


# NumPy tests the flags of one ufunc call in this order (``PyUFunc_handlefperr``)
_NUMPY_ORDER = ((_BITS[1], "divide"), (_BITS[2], "over"), (_BITS[3], "under"),
                (_BITS[0], "invalid"))


def fp_rerun(twins: Any, name: str, inputs: tuple, ops: list[str], written: Any = None,
             saved: Any = None) -> None:
    """After kernel ``name`` raised flags that warn: run its NumPy twin on the kernel's inputs,
    so NumPy itself warns per op, per category and in order, as the plain call (the twin's
    values are dropped: the kernel's are the same). ``written``/``saved``: the memory the kernel
    overwrote although it also read it, and its copy from before the kernel; it is put back
    for the twin, then the kernel's values again. Without a twin (or a copy), the flags are
    reported as one warning per category (``fp_report``)."""
    try:
        forward = twins.numpy_kernel(name)
    except Exception:  # noqa: BLE001 - no twin for this kernel: the flags as one warning each
        forward = None
    if forward is None:
        fp_report(ops)
        return
    fp_clear()
    after = None
    if saved is not None:
        after = written.copy()
        written[...] = saved
    try:
        forward(*inputs)  # NumPy warns per op (a filter may make one an exception)
    except BaseException:
        after = None  # NumPy raised before the store: the operands stay as they were
        raise
    finally:
        if after is not None:
            written[...] = after
        fp_clear()


def fp_report(ops: list[str], place: tuple[str, int, str] | None = None) -> None:
    """Warn about the raised flags as NumPy words it, naming the kernel's first op, once per
    category in NumPy's order (when the kernel's inputs are gone and it has no NumPy twin;
    ``strict`` modes reran the call up front). ``place``: the op's user file, line and module,
    where the plain call's warning comes from (``lower/places.py``)."""
    flags = _LIB.fetestexcept(_ALL) if _LIB is not None else 0
    fp_clear()  # the next kernel reports only its own
    modes = np.geterr()
    for bit, category in _NUMPY_ORDER:
        if flags & bit and modes[category] != "ignore":
            message = f"{_WORDS[category]} encountered in {ops[0] if ops else 'a kernel'}"
            if modes[category] == "raise":
                raise FloatingPointError(message)
            if place is not None:
                warn_at(message, RuntimeWarning, place)
            else:
                warnings.warn(message, RuntimeWarning, stacklevel=3)


__all__ = ["Layout", "k_order", "reduced", "copied", "empty", "fp_clear", "fp_raised", "fp_test",
           "FP_ALL", "strict", "fp_watch", "fp_rerun", "fp_report", "FP_STATUS", "fp_defer",
           "fp_undefer", "fp_raised_under", "twin_warned", "recording_modes"]


def _flag_intrinsic(bit: int):
    """An njit-callable function that raises floating-point flag ``bit`` (``feraiseexcept``), as
    NumPy's integer loops do for a division by zero or ``MIN // -1``."""
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    @intrinsic
    def raise_flag(typingctx):
        def codegen(context, builder, signature, args):
            if bit and _LIB is not None:
                fnty = ir.FunctionType(ir.IntType(32), [ir.IntType(32)])
                fn = cgutils.get_or_insert_function(builder.module, fnty, "feraiseexcept")
                builder.call(fn, [ir.Constant(ir.IntType(32), bit)])
            return context.get_dummy_value()
        return types.none(), codegen
    return raise_flag


fp_divide_by_zero = _flag_intrinsic(_BITS[1])
fp_overflow = _flag_intrinsic(_BITS[2])
__all__ += ["fp_divide_by_zero", "fp_overflow"]


def _flags_intrinsic(clear: bool, unreadable: int):
    """An njit-callable function returning this thread's FP flags (``fetestexcept``), cleared
    after with ``clear``; ``unreadable`` where they cannot be read (then ``fp_raised`` decides)."""
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    @intrinsic
    def flags(typingctx):
        def codegen(context, builder, signature, args):
            i32 = ir.IntType(32)
            if _LIB is None:
                return ir.Constant(i32, unreadable)
            fnty = ir.FunctionType(i32, [i32])
            test = cgutils.get_or_insert_function(builder.module, fnty, "fetestexcept")
            raised = builder.call(test, [ir.Constant(i32, _ALL)])
            if clear:
                reset = cgutils.get_or_insert_function(builder.module, fnty, "feclearexcept")
                builder.call(reset, [ir.Constant(i32, _ALL)])
            return raised
        return types.int32(), codegen
    return flags


_take_flags = _flags_intrinsic(clear=True, unreadable=0)  # this thread's flags, cleared
_test_flags = _flags_intrinsic(clear=False, unreadable=1)  # this thread's flags, kept


def _clear_intrinsic():
    """``fp_clear_flags()``: clear the flags ``fp_raised`` reads, from numba code. On x86-64 the
    SSE flags (MXCSR, where NumPy, Python floats and numba compute): read, and written back only
    when one is set (about 1 ns clean; glibc's ``feclearexcept`` also saves the x87 state, about
    90 ns). Stale x87 flags (``np.longdouble``) stay: they only rerun the call with NumPy.
    Elsewhere ``feclearexcept``. Side-effecting calls: LLVM moves no load above them."""
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    def mxcsr(builder: Any) -> None:
        i32, i8p = ir.IntType(32), ir.IntType(8).as_pointer()
        slot = cgutils.alloca_once(builder, i32)
        ptr = builder.bitcast(slot, i8p)
        fnty = ir.FunctionType(ir.VoidType(), [i8p])
        builder.call(cgutils.get_or_insert_function(builder.module, fnty, "llvm.x86.sse.stmxcsr"),
                     [ptr])
        state = builder.load(slot)
        with builder.if_then(builder.icmp_unsigned("!=", builder.and_(state, ir.Constant(i32, _ALL)),
                                                   ir.Constant(i32, 0)), likely=False):
            builder.store(builder.and_(state, ir.Constant(i32, ~_ALL)), slot)
            builder.call(cgutils.get_or_insert_function(
                builder.module, fnty, "llvm.x86.sse.ldmxcsr"), [ptr])

    @intrinsic
    def fp_clear_flags(typingctx):
        def codegen(context, builder, signature, args):
            if _LIB is not None and platform.machine() in ("x86_64", "AMD64"):
                mxcsr(builder)
            elif _LIB is not None:
                i32 = ir.IntType(32)
                fnty = ir.FunctionType(i32, [i32])
                reset = cgutils.get_or_insert_function(builder.module, fnty, "feclearexcept")
                builder.call(reset, [ir.Constant(i32, _ALL)])
            return context.get_dummy_value()
        return types.none(), codegen
    return fp_clear_flags


fp_clear_flags = _clear_intrinsic()  # a kernel's first statement where the wrapper tests flags
__all__ += ["fp_clear_flags"]


def _fp_any():
    """``fp_any()``: ``fp_test(FP_ALL)`` as one numba call without arguments (about 40 ns after
    its first call; the ctypes call costs about 130 ns): nonzero when some flag may be set."""
    import numba

    @numba.njit(cache=True)
    def fp_any():
        return _test_flags()
    return fp_any


fp_any = _fp_any()  # (the wrapper's test after its kernels: ``runtime.fp_any()``)
__all__ += ["fp_any"]
_PER_THREAD: list = []


def _per_thread_flags() -> np.ndarray:
    """Each numba worker thread's FP flags (cleared): one ``prange`` iteration per thread."""
    if not _PER_THREAD:
        import numba

        @numba.njit(parallel=True, cache=True)
        def take(n):  # numba splits n iterations over n threads: one each
            out = np.zeros(n, np.int32)
            for i in numba.prange(n):
                out[i] = _take_flags()
            return out
        _PER_THREAD.append(take)
    import numba
    return _PER_THREAD[0](numba.get_num_threads())


def fp_clear_threads() -> None:
    """Before a ``prange`` kernel: clear the flags of every worker thread (and this one)."""
    if _LIB is not None:
        _per_thread_flags()
        _clear(_ALL)


def fp_gather_threads() -> None:
    """After a ``prange`` kernel: raise the worker threads' flags in this thread, where
    ``fp_raised`` reads them (flags are per thread)."""
    if _LIB is not None:
        flags = int(np.bitwise_or.reduce(_per_thread_flags()))
        if flags:
            _LIB.feraiseexcept(flags)


__all__ += ["fp_clear_threads", "fp_gather_threads"]


# -- pooled temporaries (issue 11, lever 3) ---------------------------------------------------------

POOL_MIN_BYTES = 1 << 20  # smaller buffers come from malloc's heap without fresh pages anyway


class BufferPool:
    """Temporaries of one wrapper that never leave a call (buffers between its kernels), kept
    from one call to the next so that big ones are not page-faulted (and zeroed by the kernel)
    on every call.

    ``take`` checks a buffer out of its slot (``dict.pop``: atomic, so two threads, or a call
    nested in another, never get the same buffer: the second finds the slot empty and
    allocates); ``give`` puts it back after the call's last use. Only a C-contiguous buffer of
    the slot's shape and dtype is reused; the wrapper pools no array it returns or lets escape.
    """

    __slots__ = ("slots",)

    def __init__(self) -> None:
        self.slots: dict[int, np.ndarray] = {}

    def take(self, slot: int, shape: tuple, dtype: Any) -> np.ndarray:
        buf = self.slots.pop(slot, None)
        if buf is not None and buf.shape == shape and buf.dtype == dtype \
                and buf.flags.c_contiguous:
            return buf
        return np.empty(shape, dtype)

    def give(self, slot: int, buf: np.ndarray) -> None:
        if buf.nbytes >= POOL_MIN_BYTES:
            self.slots[slot] = buf


def snapshot(pool: BufferPool, slot: int, array: np.ndarray) -> np.ndarray:
    """A copy of ``array`` in a buffer of ``pool`` (big ones are reused across calls: no page
    faults): what a kernel overwrites, kept for ``fp_rerun``; the wrapper gives it back."""
    buf = pool.take(slot, array.shape, array.dtype)
    np.copyto(buf, array)
    return buf


__all__ += ["BufferPool", "POOL_MIN_BYTES", "snapshot"]


def mask_mismatch(a: np.ndarray, mask: np.ndarray) -> None:
    """NumPy's IndexError for a boolean index whose shape differs from the array's."""
    for k in range(mask.ndim):
        if a.shape[k] != mask.shape[k]:
            raise IndexError(f"boolean index did not match indexed array along axis {k}; size "
                             f"of axis is {a.shape[k]} but size of corresponding boolean axis "
                             f"is {mask.shape[k]}")


# -- results NumPy recomputes: float max/min reductions that end at a zero (issue 10: signed
# zeros), means and variances of empty slices (NumPy's Python warning) ------------------------
# NumPy's max/min of an array holding both 0.0 and -0.0 returns the zero its SIMD lane order
# (CPU-dependent) leaves; a kernel whose such result is a zero bumps this process-wide counter
# (``zero_watch``) and the wrapper, finding it moved, reruns the call with NumPy (as FP flags do),
# or, where the call cannot rerun, takes that kernel's outputs from its NumPy twin (``zero_twin``;
# structured loops: the runner reruns with NumPy, written inputs put back; CUDA: a device flag).
# Measured (numpy 2.4.6, X86_V3/AVX2 dispatch; CI's AVX-512 machines dispatch other loops): an
# all-zeros array's max/min is its last element, but with negatives mixed in neither the first
# nor the last zero decides: the vector max (ties: second operand) and the scalar tail (ties:
# the accumulator) disagree, and strides, axes and inner-loop lengths pick which runs where.
# Emulating that per dispatch target was judged not worth it: a zero result is rare and NumPy's
# answer is exact. Threads: the counter is process-wide on purpose (prange workers bump it from
# their threads); another thread's bump only makes a call take NumPy's (same) answer.

_ZERO_SYMBOL = "astcompiler_zero_results"
ZEROS = ctypes.c_int64(0)  # only grows (atomic adds): another thread's bump only reruns; the
# wrapper reads ``ZEROS.value`` before and after the kernel (about 25 ns each)


def _zero_note():
    """An njit-callable function adding 1 to ``ZEROS`` atomically (an external symbol, so
    cached kernels of another process find this process's counter)."""
    from llvmlite import binding, ir
    from numba.core import types
    from numba.extending import intrinsic

    binding.add_symbol(_ZERO_SYMBOL, ctypes.addressof(ZEROS))

    @intrinsic
    def zero_note(typingctx):
        def codegen(context, builder, signature, args):
            i64 = ir.IntType(64)
            word = builder.module.globals.get(_ZERO_SYMBOL)
            if word is None:
                word = ir.GlobalVariable(builder.module, i64, _ZERO_SYMBOL)
                word.linkage = "external"
            builder.atomic_rmw("add", word, ir.Constant(i64, 1), "monotonic")
            return context.get_dummy_value()
        return types.none(), codegen
    return zero_note


_note_zero = _zero_note()


def _zero_watch():
    import numba

    @numba.njit(cache=True)
    def zero_watch(r):
        """``r``, a float max/min reduction's result; a zero (either sign) is counted."""
        if r == 0:
            _note_zero()
        return r
    return zero_watch


zero_watch = _zero_watch()


def _zero_watch_array():
    import numba

    @numba.njit(cache=True)
    def zero_watch_array(r):
        """``r``, an array of float max/min results (loop code's axis reductions); a zero
        among them (either sign) is counted once."""
        for v in r.flat:
            if v == 0:
                _note_zero()
                break
        return r
    return zero_watch_array


zero_watch_array = _zero_watch_array()


def _empty_watch():
    import numba

    @numba.njit(cache=True)
    def empty_check(dof):
        """A mean, var or std over ``dof`` degrees of freedom (its reduced count less ``ddof``):
        at most zero, NumPy warns through ``warnings.warn`` ("Mean of empty slice", "Degrees
        of freedom <= 0 for slice"), which no FP flag reports (``np.errstate(all="ignore")``
        keeps it): counted, so the call reruns with NumPy, as for a zero max/min."""
        if dof <= 0:
            _note_zero()

    @numba.njit(cache=True)
    def empty_watch(r, dof):
        """``r``, a mean/var/std of loop code, after ``empty_check(dof)``."""
        empty_check(dof)
        return r
    return empty_check, empty_watch


empty_check, empty_watch = _empty_watch()


def zero_twin(twins: Any, name: str, inputs: tuple) -> tuple:
    """Kernel ``name``'s outputs from its NumPy twin, for a kernel whose float max/min result
    is a zero where the call cannot rerun with NumPy (it wrote an input, or a step before it
    did): NumPy's own sign of that zero. The kernel already reported its FP flags, so the
    twin runs with them ignored and its warnings dropped (each would be a second one)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return twins.numpy_kernel(name)(*inputs)


def zero_count() -> int:
    """How many float max/min results kernels found to be a zero so far (``zero_watch``)."""
    return ZEROS.value


__all__ += ["zero_watch", "zero_watch_array", "empty_check", "empty_watch", "zero_twin",
            "zero_count", "ZEROS"]
