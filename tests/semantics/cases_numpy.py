"""The NumPy surface the compiler lowers: scalar types and NumPy's scalar rules, dtypes numba
does not handle (float16, complex, bool arithmetic), empty and size-1 arrays after a size became
dynamic, non-contiguous and read-only inputs, views, casting errors."""

from __future__ import annotations

import numpy as np

from .harness import CaseRegistry, Program
from .values import mat, vec

CASES = CaseRegistry("numpy")


def sizes(values, dtype=np.float64):
    return lambda: [(vec(n, dtype),) for n in values]


# ----- NumPy scalars and their rules --------------------------------------------------------------
def element_types(x):
    return type(x[0]), isinstance(x[0], float), type(x.sum()), isinstance(x.sum(), np.floating)


CASES.pure("element_scalar_types", element_types,
           lambda: [(vec(2),), (vec(3, np.float32),), (vec(3, np.int64),), (vec(4, np.bool_),)])


def npbool_identity(x):
    b = x[0] > 1
    return b is True, b == True, type(b), bool(b) is True  # noqa: E712 - the comparison is the point


CASES.pure("np_bool_is_not_true", npbool_identity, lambda: [(vec(2, start=2),), (vec(3),), (vec(3, start=5),)])


def scalar_str(x):
    return str(x[0]), repr(x[0]), f"{x[0]:.3f}", str(float(x[0]))


CASES.pure("np_scalar_str_repr", scalar_str,
           lambda: [(np.array([0.1, 2.0]),), (np.array([0.1, 2.0, 3.0], np.float32),),
                    (np.array([7, 1, 2], np.int32),)])


def np_float_div_zero(x):
    return x[0] / 0, x[0] // 0, -x[0] / 0.0


CASES.pure("np_scalar_divide_by_zero", np_float_div_zero, sizes((2, 3, 4)))


def py_float_div_zero(x):
    return float(x[0]) / 0


CASES.pure("python_float_of_element_div_zero", py_float_div_zero, sizes((2, 3)))


def np_int_floordiv_zero(x):
    return x[0] // 0, x[0] % 0


CASES.pure("np_int_scalar_floordiv_zero", np_int_floordiv_zero, sizes((2, 3, 4), np.int64))


def np_int_scalar_wraps(x):
    return x[0] * 2 ** 62, x.max() * np.int64(2 ** 62)


CASES.pure("np_int64_scalar_wraps", np_int_scalar_wraps, sizes((2, 3, 4), np.int64))


def np_int8_scalar_plus_python(x, k):
    return x[0] + k, (x[0] + k).dtype


CASES.pure("np_int8_scalar_plus_int", np_int8_scalar_plus_python,
           lambda: [(np.array([100, 1], np.int8), k) for k in (1, 2, 100, 300)])


def builtin_sum_max(x):
    return sum(x), max(x), min(x), any(x > 2), sorted(x)[:2], list(x)[:1]


CASES.pure("builtins_on_arrays", builtin_sum_max, sizes((2, 3, 4)))


def float32_scalar_promotion(x):
    s = x.sum()
    return s * 2.5, s + np.float64(1), s / 3, (s * 2).dtype


CASES.pure("float32_scalar_promotion", float32_scalar_promotion, sizes((2, 3, 4), np.float32))


def python_scalar_keeps_array_dtype(x):
    return x * 2.5, x + 1, (x * 2.5).dtype, (x + 1).dtype


CASES.pure("python_scalar_keeps_dtype", python_scalar_keeps_array_dtype,
           lambda: [(vec(2, np.float32),), (vec(3, np.int8),), (vec(3, np.uint16),), (vec(4, np.float16),)])


def item_and_tolist_types(x):
    return x.tolist(), [type(v).__name__ for v in x.tolist()], x[0].item(), type(x[0].item())


CASES.pure("item_tolist_types", item_and_tolist_types,
           lambda: [(vec(2),), (vec(3, np.int32),), (vec(3, np.bool_),), (vec(2, np.complex128),)])


def numpy_max_nan(x):
    y = x.copy()
    y[0] = np.nan
    return y.max(), np.nanmax(y), np.fmax(y, 0.0), max(float(y[0]), 1.0), max(1.0, float(y[0]))


CASES.pure("nan_max_rules", numpy_max_nan, sizes((2, 3, 4)))


def signed_zero_max(x):
    z = x[0] * 0.0
    return max(0.0, -0.0), max(-0.0, 0.0), min(-z, z), np.maximum(-0.0, 0.0), abs(-0.0)


CASES.pure("signed_zero_min_max", signed_zero_max, sizes((2, 3)))


# ----- empty and size-1 arrays after a size became dynamic -----------------------------------------
def reduce_empty(x):
    return x.sum(), x.prod(), x.mean() if x.size else None


CASES.pure("reduce_empty", reduce_empty, sizes((2, 3, 0, 4, 1)))


def max_of_empty(x):
    return x.max()


CASES.pure("max_of_empty_raises", max_of_empty, sizes((2, 3, 0, 1)))


def argmax_of_empty(x):
    return int(np.argmax(x))


CASES.pure("argmax_of_empty_raises", argmax_of_empty, sizes((2, 3, 0)))


def broadcast_size_one(x, y):
    return x + y, (x * y).shape


CASES.pure("broadcast_size_one", broadcast_size_one,
           lambda: [(vec(3), vec(3)), (vec(4), vec(4)), (vec(4), vec(1)), (vec(1), vec(5)), (vec(2), vec(3))])


def slicing_small_sizes(x):
    return x[::-2], x[-3:], x[1:-1], x[5:], x[::-1][:2]


CASES.pure("slicing_sizes_0_1_2", slicing_small_sizes, sizes((4, 5, 1, 0, 2)))


def iterate_empty(x):
    out = []
    for v in x:
        out.append(v * 2)
    return out, len(out)


CASES.pure("iterate_empty", iterate_empty, sizes((2, 3, 0, 1)))


def mean_empty_warns(x):
    with np.errstate(all="ignore"):
        return np.mean(x)


CASES.pure("mean_of_empty_nan", mean_empty_warns, sizes((2, 3, 0, 4)))


def matrix_sizes(x):
    return x @ x.T, x.sum(axis=0), x.reshape(-1)


CASES.pure("matrix_sizes_with_zero", matrix_sizes,
           lambda: [(mat(2, 3),), (mat(3, 3),), (np.zeros((0, 3)),), (mat(1, 1),), (np.zeros((2, 0)),)])


def shape_unpack(x):
    r, c = x.shape
    return r * c


CASES.pure("shape_unpack_ndim_error", shape_unpack,
           lambda: [(mat(2, 3),), (mat(3, 3),), (vec(4),), (mat(1, 2),)])


def boolean_mask(x):
    return x[x > 2], (x > 2).sum(), np.nonzero(x > 2)[0]


CASES.pure("boolean_mask_dynamic", boolean_mask, sizes((2, 3, 4, 0, 5)))


def fancy_index(x, idx):
    return x[idx]


CASES.pure("fancy_index_errors", fancy_index,
           lambda: [(vec(4), [0, 1]), (vec(5), [2, -1]), (vec(5), [7]), (vec(3), []), (vec(3), [True, False, True])])


# ----- dtypes numba does not handle -------------------------------------------------------------
def float16_ops(x):
    return x * 2 + 1, x.sum(), (x / 3).dtype


CASES.pure("float16_arithmetic", float16_ops, sizes((2, 3, 4), np.float16))


def complex_ops(x):
    z = x * 1j + 1
    return z, np.abs(z), z.real, z.conj(), z.dtype


CASES.pure("complex_arithmetic", complex_ops, sizes((2, 3, 4)))


def complex64_ops(x):
    z = x.astype(np.complex64)
    return z * z, (z * 2.0).dtype


CASES.pure("complex64_arithmetic", complex64_ops, sizes((2, 3), np.float32))


def bool_arith(x):
    b = x > 2
    return b + b, b * 3, b & ~b, b.sum(), (b + b).dtype


CASES.pure("bool_array_arithmetic", bool_arith, sizes((2, 3, 4)))


def bool_subtract_error(x):
    b = x > 2
    return b - b


CASES.pure("bool_subtract_type_error", bool_subtract_error, sizes((2, 3)))


def uint_int_promotion(x, y):
    return x + y, (x + y).dtype, (x * 1.5).dtype


CASES.pure("uint64_int64_promotion", uint_int_promotion,
           lambda: [(vec(2, np.uint64), vec(2, np.int64)), (vec(3, np.uint64), vec(3, np.int64)),
                    (vec(3, np.uint8), vec(3, np.int8))])


def int_sum_dtype(x):
    return x.sum(), x.sum().dtype, np.cumsum(x).dtype, x.mean().dtype


CASES.pure("small_int_sum_dtype", int_sum_dtype,
           lambda: [(vec(2, np.int8),), (vec(3, np.int8),), (vec(3, np.uint16),), (vec(4, np.bool_),)])


def object_dtype(x):
    o = np.array([1, "a", None], dtype=object)
    return o[: x.shape[0]], x


CASES.pure("object_dtype_array", object_dtype, sizes((1, 2, 3)))


def string_dtype(x):
    s = np.array(["a", "bc", "def"])
    return s[: x.shape[0]], np.char.upper(s)[0], s.dtype


CASES.pure("string_dtype_array", string_dtype, sizes((1, 2, 3)))


def dtype_cycle(x):
    return (x * 2).dtype, x + 1


CASES.pure("dtype_cycle_past_recompile_limit", dtype_cycle,
           lambda: [(vec(2, dt),) for dt in (np.float64, np.float32, np.int64, np.int32, np.int16,
                                            np.int8, np.uint8, np.uint16, np.uint32, np.float16,
                                            np.complex128, np.bool_, np.float64)])


# ----- layouts: non-contiguous, Fortran order, 0-d, read-only ---------------------------------------
def strided_sum(x):
    return x * 2 + 1, x.sum(axis=0), x.flags.c_contiguous


CASES.pure("non_contiguous_inputs", strided_sum,
           lambda: [(mat(3, 4),), (mat(4, 4).T,), (mat(4, 6)[::2, ::3],), (np.asfortranarray(mat(2, 3)),),
                    (mat(3, 4)[:, ::-1],)])


def strided_inplace(x):
    x *= 2
    x[0] = -1.0
    return x.sum()


@CASES.case("non_contiguous_inplace")
def _strided_inplace():
    base = vec(8)
    return Program(strided_inplace, [(vec(4),), (base[::2],), (base[1::3],), (mat(3, 3).T[0],)])


def zero_d(x):
    return x + 1, x.shape, x.ndim, float(x), x[()]


CASES.pure("zero_d_arrays", zero_d, lambda: [(np.array(1.5),), (np.array(2.5),), (np.array(3, np.int32),)])


def readonly_write(x):
    y = x * 2
    x += 1
    return y


@CASES.case("readonly_input_inplace")
def _readonly():
    def ro(n):
        a = vec(n)
        a.flags.writeable = False
        return a
    return Program(readonly_write, [(vec(2),), (vec(3),), (ro(3),), (vec(4),)])


def casting_inplace_error(x):
    x += 1.5
    return x


CASES.pure("inplace_casting_error", casting_inplace_error,
           lambda: [(vec(2),), (vec(3),), (vec(3, np.int64),), (vec(4, np.float32),)])


def astype_negative_truncation(x):
    y = x - 2.5
    return y.astype(np.int64), y.astype(np.uint8).dtype, np.trunc(y)


CASES.pure("astype_truncation", astype_negative_truncation, sizes((2, 3, 4)))


# ----- views and aliasing of results --------------------------------------------------------------
def return_views(x):
    return x[1:], x.T, x.reshape(-1), x[::-1]


CASES.pure("returned_views_of_argument", return_views,
           lambda: [(mat(2, 3),), (mat(3, 3),), (mat(3, 4),)])


def view_then_mutate(x):
    v = x[:2]
    v[0] = 100.0
    return x, v


CASES.pure("mutate_through_view", view_then_mutate, sizes((2, 3, 4)))


def append_then_mutate(x, lst):
    y = x * 2
    lst.append(y)
    y += 1
    return lst[-1] is y


CASES.add("append_array_then_mutate", lambda: Program(
    append_then_mutate, [(vec(2), []), (vec(3), []), (vec(4), [])]))


def store_in_dict_then_mutate(x, d):
    y = x + 0
    d["y"] = y
    y[0] = -5.0
    return y


CASES.add("store_array_then_mutate", lambda: Program(
    store_in_dict_then_mutate, [(vec(2), {}), (vec(3), {}), (vec(4), {"a": 1})]))


def copy_vs_view(x):
    a = x.copy()
    b = x.view()
    b[0] = 7.0
    return a, b, np.shares_memory(b, x)


CASES.pure("copy_vs_view", copy_vs_view, sizes((2, 3, 4)))


def out_argument(x, out):
    np.multiply(x, 2, out=out)
    return out


CASES.add("out_argument_identity", lambda: Program(
    out_argument, [(vec(2), np.zeros(2)), (vec(3), np.zeros(3)), (vec(3), np.zeros(3, np.float32)),
                   (vec(4), np.zeros(3))]))


def stack_list(lst):
    return np.stack(lst), np.concatenate(lst), len(lst)


CASES.pure("stack_dynamic_list", stack_list,
           lambda: [([vec(2), vec(2)],), ([vec(3), vec(3), vec(3)],), ([vec(3)],), ([vec(2), vec(3)],)])


def creation_dtypes(x, n):
    return np.zeros((n, 2)).dtype, np.ones(n, dtype=int), np.full(n, 1.5, np.float32), np.eye(n), np.empty(0).shape


CASES.pure("creation_functions", creation_dtypes, lambda: [(vec(2), n) for n in (2, 3, 0, 1)])


def errstate_sqrt_negative(x):
    with np.errstate(invalid="ignore"):
        return np.sqrt(x - 3), np.log(x - 1)


CASES.pure("sqrt_log_nan_inf", errstate_sqrt_negative, sizes((2, 3, 4)))


def int_array_power_negative(x):
    return x ** -1


CASES.pure("int_array_negative_power_error", int_array_power_negative,
           lambda: [(vec(2),), (vec(3),), (vec(3, np.int64),)])


def integer_division_arrays(x):
    y = x - 3
    return y // 2, y % 2, np.floor_divide(y, -2), np.fmod(y, 2)


CASES.pure("array_floor_division_negative", integer_division_arrays,
           lambda: [(vec(3, np.int64),), (vec(4, np.int64),), (vec(5),), (vec(4, np.int8),)])


# ----- NumPy's own errors for read-only and mismatched outputs (issue 9 leftovers) ------------------
def readonly_setitem(x):
    y = x + 1
    x[0] = 5.0
    return y


@CASES.case("readonly_input_setitem")
def _readonly_setitem():
    def ro(n):
        a = vec(n)
        a.flags.writeable = False
        return a
    return Program(readonly_setitem, [(vec(2),), (vec(3),), (ro(3),), (vec(4),), (ro(2),)])


def out_into(x, out):
    np.add(x, 1.5, out=out)
    return out


@CASES.case("out_argument_readonly_and_casting")
def _out_errors():
    def ro(n):
        a = np.zeros(n)
        a.flags.writeable = False
        return a
    return Program(out_into, [(vec(2), np.zeros(2)), (vec(3), np.zeros(3)), (vec(3), ro(3)),
                              (vec(3), np.zeros(3, np.int64)), (vec(2), np.zeros((2, 2))),
                              (vec(4), np.zeros(4))])
