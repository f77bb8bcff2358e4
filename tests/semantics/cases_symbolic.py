"""Group 1: symbolic values never leak into Python semantics.

Python ints and array sizes become dynamic after the second call (their value changes); the
compiled function must still see real ints for ``isinstance``, ``type``, ``str``, f-strings,
``hash``, ``%``-formatting, NumPy functions, arbitrary-precision arithmetic, and cheap loops.
"""

from __future__ import annotations

import math

import numpy as np

from .harness import CaseRegistry, Program, call
from .values import SIZES, each, mat, sized, vec

CASES = CaseRegistry("symbolic")
INTS = (1, 2, 3, 4, 7)


def ints(values=INTS):
    return lambda: [(v,) for v in values]


def arr_int(values=INTS, n=3, dtype=np.float64):
    return lambda: [(vec(n, dtype), v) for v in values]


def arrays(sizes=SIZES, dtype=np.float64):
    return lambda: sized(lambda n: vec(n, dtype), sizes)


def matrices(shapes=((2, 3), (3, 3), (3, 4), (4, 2)), dtype=np.float64):
    return lambda: [(mat(r, c, dtype),) for r, c in shapes]


# ----- isinstance / type of dynamic ints (issue example) ----------------------------------------
isinstance_lambda = lambda x: x * 2 if isinstance(x, int) else x + 1  # noqa: E731
CASES.pure("isinstance_lambda", isinstance_lambda, ints((1, 2, 3, 4)))
CASES.pure("isinstance_lambda_mixed", isinstance_lambda, ints((1, 2, 3, 2.5, 4)))


def isinstance_with_array(x, n):
    if isinstance(n, int):
        return x * n
    return x


CASES.pure("isinstance_int_arg_array", isinstance_with_array, arr_int())


def type_is_int(x, n):
    return x + 1 if type(n) is int else x - 1


CASES.pure("type_is_int", type_is_int, arr_int())


def type_name_of_int(n):
    return type(n).__name__


CASES.pure("type_name_int", type_name_of_int, ints())


def isinstance_size(x):
    return isinstance(x.shape[0], int), type(x.shape[0]) is int


CASES.pure("isinstance_size", isinstance_size, arrays())


def type_of_size(x):
    return type(x.shape[0]), type(len(x)), type(x.size), type(x.ndim)


CASES.pure("type_of_size", type_of_size, arrays())


def isinstance_bool_int(x, n):
    return isinstance(n, bool), isinstance(n, (int, float)), x.sum() * n


CASES.pure("isinstance_tuple_of_types", isinstance_bool_int, arr_int())


# ----- str / repr / f-strings / format / % of dynamic ints and sizes ----------------------------
def str_of_size(x):
    return "n=" + str(x.shape[0])  # issue example


CASES.pure("str_size", str_of_size, arrays())


def str_of_int(x, n):
    return "n=" + str(n), x * 2


CASES.pure("str_int", str_of_int, arr_int((2, 3, -4, 0, 1)))


def repr_of_size(x):
    return repr(x.shape[0]) + "/" + repr(len(x))


CASES.pure("repr_size", repr_of_size, arrays())


def fstring_shape(x):
    return f"{x.shape[0]}x{x.shape[1]}"


CASES.pure("fstring_shape", fstring_shape, matrices())


def fstring_spec(x, n):
    return f"{n:03d}|{x.shape[0]:>4}|{n!r}|{n / 2:.2f}"


CASES.pure("fstring_format_spec", fstring_spec, arr_int((2, 3, 5, 12)))


def fstring_in_print(x):
    print(f"size {x.shape[0]}, total {x.size}")
    return x * 2


CASES.pure("fstring_print", fstring_in_print, arrays())


def percent_format(x):
    return "%d items, %s, %5.2f" % (x.shape[0], x.shape[0], x.shape[0] / 3)


CASES.pure("percent_format", percent_format, arrays())


def percent_format_int(n):
    return "%03d-%x-%o" % (n, n, n)


CASES.pure("percent_format_int", percent_format_int, ints((2, 3, 10, 255)))


def format_builtin(x):
    n = x.shape[0]
    return format(n, "b"), "{}-{}".format(n, n + 1), "{:>5}".format(n)


CASES.pure("format_builtin", format_builtin, arrays())


def join_shape(x):
    return ",".join(str(d) for d in x.shape)


CASES.pure("join_shape", join_shape, matrices())


def str_concat_in_loop(x):
    s = ""
    for i in range(x.shape[0]):
        s += str(i)
    return s


CASES.pure("str_concat_loop", str_concat_in_loop, arrays())


def hash_of_size(x):
    return hash(x.shape[0]), hash((x.shape[0], 1))


CASES.pure("hash_size", hash_of_size, arrays())


def hash_of_int(n):
    return hash(n) == hash(int(str(n)))


CASES.pure("hash_int", hash_of_int, ints((2, 3, -1, 10**20)))


def size_as_dict_key(x):
    names = {2: "two", 3: "three", 4: "four"}
    return names.get(x.shape[0], "many")


CASES.pure("size_dict_key", size_as_dict_key, arrays())


def size_in_tuple(x):
    return x.shape[0] in (2, 4), x.shape[0] == 3, x.shape[0] > 3


CASES.pure("size_membership", size_in_tuple, arrays())


def size_key_in_result(x):
    return {x.shape[0]: x.sum(), "n": len(x)}


CASES.pure("size_dict_result", size_key_in_result, arrays())


def size_bit_length(x):
    return x.shape[0].bit_length(), (x.shape[0]).to_bytes(2, "little")


CASES.pure("size_int_methods", size_bit_length, arrays())


def int_methods(n):
    return n.bit_length(), abs(n), n.conjugate(), n.real, n.numerator


CASES.pure("int_methods", int_methods, ints((2, 3, -5, 0)))


# ----- negative / 0 / 1 dynamic int arguments ----------------------------------------------------
def slice_negative_shift(x, shift):
    return x[-shift:]  # issue example: shift = -2 slices from index 2


CASES.pure("slice_neg_shift", slice_negative_shift,
           lambda: [(vec(6), s) for s in (1, 2, -2, 0, -1, 3)])


def slice_prefix(x, n):
    return x[:n]


CASES.pure("slice_prefix_0_1", slice_prefix, lambda: [(vec(5), n) for n in (3, 2, 0, 1, -1, 7)])


def roll_by(x, n):
    return np.roll(x, n)


CASES.pure("roll_dynamic", roll_by, lambda: [(vec(4), n) for n in (1, 2, -1, 0, 5)])


def scale_by(x, n):
    return x * n


CASES.pure("scale_0_1_neg", scale_by, lambda: [(vec(3, np.int64), n) for n in (2, 3, 0, 1, -1)])


def zeros_of(n):
    return np.zeros(n)


CASES.pure("zeros_dynamic_0_1", zeros_of, ints((2, 3, 0, 1, 4)))


def sum_range(x, n):
    total = 0
    for i in range(n):
        total += i
    return x + total


CASES.pure("range_loop_0_1_neg", sum_range, lambda: [(vec(2), n) for n in (3, 4, 0, 1, -2)])


def index_dynamic(x, i):
    return x[i]


CASES.pure("index_neg", index_dynamic, lambda: [(vec(5), i) for i in (1, 2, -1, 0, -5)])


def index_out_of_bounds(x, i):
    return x[i] * 2


CASES.pure("index_oob_raises", index_out_of_bounds, lambda: [(vec(4), i) for i in (1, 2, 4, -5, 3)])


def repeat_list(x, n):
    return [0] * n, x[:1] * n


CASES.pure("list_times_int", repeat_list, lambda: [(vec(3), n) for n in (2, 3, 0, 1, -1)])


def reshape_dynamic(x, n):
    return x.reshape(n, -1)


CASES.pure("reshape_dynamic", reshape_dynamic, lambda: [(vec(12), n) for n in (2, 3, 4, 5, 1)])


def dyn_int_compare(x, n):
    if n < 0:
        return x - 1
    if n == 0:
        return x * 0
    if n == 1:
        return x
    return x * n


CASES.pure("compare_0_1_neg", dyn_int_compare, lambda: [(vec(3), n) for n in (2, 3, 0, 1, -3)])


def int_true_div(x, n):
    return x.sum() / n, 7 / n, 7 // n, 7 % n


CASES.pure("int_div_by_dynamic", int_true_div, lambda: [(vec(3), n) for n in (2, 3, -2, 0, 5)])


def floor_mod_negative(n):
    return n // 3, n % 3, -n // 2, divmod(n, 4), pow(n, 2, 5)


CASES.pure("floor_mod_negative", floor_mod_negative, ints((5, 7, -7, 0, -1)))


def neg_power(n):
    return 2 ** n


CASES.pure("power_negative_exponent", neg_power, ints((2, 3, -1, 0, 70)))


def shift_ops(n):
    return n << 3, n >> 1, n & 6, n | 1, n ^ 5, ~n


CASES.pure("bit_ops", shift_ops, ints((2, 3, -4, 0, 9)))


def bool_of_int(x, n):
    return bool(n), not n, (n and 5), (n or 7), x[:1] * bool(n)


CASES.pure("bool_of_int", bool_of_int, lambda: [(vec(2), n) for n in (2, 3, 0, -1, 1)])


# ----- size arithmetic and types ---------------------------------------------------------------
def shape_arith(x):
    n = x.shape[0]
    return n * 2 + 1, n / 2, n // 2, n % 3, n ** 2, -n, abs(n - 3), divmod(n, 3)


CASES.pure("shape_arith_types", shape_arith, arrays())


def len_and_shape(x):
    return len(x), x.shape, x.size, x.ndim, x.shape[-1]


CASES.pure("len_shape_values", len_and_shape, matrices())


def shape_list(x):
    return list(x.shape), sorted(x.shape), max(x.shape), min(x.shape), sum(x.shape)


CASES.pure("shape_list_builtins", shape_list, matrices())


def enumerate_shape(x):
    return [(i, d) for i, d in enumerate(x.shape)]


CASES.pure("enumerate_shape", enumerate_shape, matrices())


def size_list_len(x):
    return [0] * x.shape[0], list(range(len(x)))


CASES.pure("size_list_len", size_list_len, arrays())


def size_float_math(x):
    n = x.shape[0]
    return math.sqrt(n), math.floor(n / 2), math.ceil(n / 3), float(n), int(n / 2), round(n / 3, 2)


CASES.pure("size_math_module", size_float_math, arrays())


def size_min_max(x):
    n = x.shape[0]
    return min(n, 3), max(n, 3), min(n, 2.5), bool(n)


CASES.pure("size_min_max", size_min_max, arrays())


def size_div_zero(x, k):
    return x.shape[0] // k


CASES.pure("size_floordiv_zero", size_div_zero, lambda: [(vec(n), k) for n, k in ((2, 1), (3, 2), (4, 0), (5, 2))])


def size_in_array_math(x):
    return x / x.shape[0], x * len(x), x - x.size


CASES.pure("size_in_array_math", size_in_array_math, arrays(dtype=np.float32))


def size_in_int_array(x):
    return x * x.shape[0], x // len(x)


CASES.pure("size_in_int_array", size_in_int_array, arrays(dtype=np.int32))


def mean_by_len(x):
    return x.sum() / len(x)


CASES.pure("mean_by_len_type", mean_by_len, arrays(dtype=np.float32))


# ----- NumPy functions on sizes and ints --------------------------------------------------------
def attention_scale(q):
    return q / np.sqrt(q.shape[-1])  # issue example: float32 / np.float64 -> float64


CASES.pure("np_sqrt_size_dtype", attention_scale, matrices(dtype=np.float32))


def attention_scale_dtype(q):
    return (q / np.sqrt(q.shape[-1])).dtype


CASES.pure("np_sqrt_size_dtype_only", attention_scale_dtype, matrices(dtype=np.float32))


def np_sqrt_scalar(q):
    return np.sqrt(q.shape[-1])


CASES.pure("np_sqrt_size_scalar", np_sqrt_scalar, matrices())


def np_prod_shape(x):
    return np.prod(x.shape)  # np.int64


CASES.pure("np_prod_shape", np_prod_shape, matrices())


def np_prod_tail(x):
    return np.prod(x.shape[1:]), math.prod(x.shape)


CASES.pure("np_prod_tail_math_prod", np_prod_tail, matrices())


def np_log_int(x, n):
    return np.log(n), np.exp(n) * x[0], np.float32(n), np.int32(n) + 1


CASES.pure("np_funcs_on_int", np_log_int, arr_int((2, 3, 4, 5)))


def np_array_of_size(x):
    return np.array(x.shape[0]), np.array(x.shape), np.asarray(len(x)).dtype


CASES.pure("np_array_of_size", np_array_of_size, arrays())


def arange_size(x):
    return np.arange(x.shape[0]), np.arange(len(x)).dtype, np.full(x.shape[0], x.shape[0])


CASES.pure("np_arange_full_size", arange_size, arrays())


def linspace_size(x):
    return np.linspace(0, 1, x.shape[0]) * x


CASES.pure("np_linspace_size", linspace_size, arrays())


def int_scalar_promotion(x, n):
    return x + n, (x * n).dtype, x / n


CASES.pure("int_scalar_promotion_f32", int_scalar_promotion, arr_int((2, 3, 4), dtype=np.float32))


def int_scalar_int8(x, n):
    return x + n


CASES.pure("int_scalar_int8_overflow", int_scalar_int8,
           lambda: [(vec(3, np.int8), n) for n in (2, 3, 100, 300)])


def np_float64_of_size(x):
    return np.float64(x.shape[0]) / 3, type(float(x.shape[0]) / 3)


CASES.pure("np_float64_of_size", np_float64_of_size, arrays())


def sum_then_divide(x):
    s = x.sum()
    return s / x.size, type(s)


CASES.pure("numpy_scalar_types", sum_then_divide, arrays(dtype=np.int64))


def item_of_array(x):
    return x.sum().item(), x[0].item(), float(x.max()), int(x.min())


CASES.pure("item_python_scalars", item_of_array, arrays(dtype=np.float32))


# ----- arbitrary-precision ints -----------------------------------------------------------------
def big_multiply(x, n):
    return x * (n * n * n)  # issue example: n = 10**7 must raise OverflowError, not wrap


CASES.pure("big_int_times_array", big_multiply,
           lambda: [(vec(3, np.int64, 0), n) for n in (2, 3, 10**7)])


def cube(n):
    return n * n * n


CASES.pure("big_int_cube", cube, ints((2, 3, 10**7, -(10**7))))


def power_of_two(x, n):
    return x + 0 * n, 2 ** n, (1 << n) - 1


CASES.pure("big_int_power", power_of_two, lambda: [(vec(2), n) for n in (10, 20, 70, 130)])


def factorial_loop(x, n):
    acc = 1
    for i in range(1, n + 1):
        acc *= i
    return x + n, acc


CASES.pure("big_int_factorial_loop", factorial_loop, lambda: [(vec(2), n) for n in (3, 5, 21, 25)])


def sum_squares_big(n):
    total = 0
    for i in range(5):
        total += (n + i) ** 3
    return total


CASES.pure("big_int_sum_cubes_loop", sum_squares_big, ints((2, 3, 10**7, 3 * 10**6)))


def int64_boundary(x, n):
    return x.shape[0] + n, n + 1, n * 2


CASES.pure("int64_boundary", int64_boundary,
           lambda: [(vec(2), n) for n in (2, 3, 2**63 - 1, -(2**63))])


def big_int_compare(x, n):
    return x * 2 if n > 10**18 else x


CASES.pure("big_int_compare", big_int_compare, lambda: [(vec(2), n) for n in (2, 3, 10**19, 4)])


def big_int_to_float(n):
    return float(n) / 3, n / 7, n // 7


CASES.pure("big_int_true_div", big_int_to_float, ints((2, 3, 10**20, 7**30)))


def big_int_to_array(n):
    return np.array([n, 1])


CASES.pure("big_int_to_array", big_int_to_array, ints((2, 3, 2**62, 2**64)))


def big_int_index(x, n):
    return x[n % len(x)] + (n * n) % 1000


CASES.pure("big_int_mod_index", big_int_index, lambda: [(vec(4), n) for n in (2, 3, 10**12, 10**15)])


# ----- size expressions stay cheap --------------------------------------------------------------
def mod_loop(x, s):
    for _ in range(3):
        s = (s * 3 + 1) % 1000
    return x + s


CASES.pure("cheap_mod_loop_3", mod_loop, lambda: [(vec(2), s) for s in (1, 2, 3, 4, 500)])


def mod_loop_10(x, s):
    for _ in range(10):
        s = (s * 3 + 1) % 1000  # issue example: 23 s in sympy.simplify today
    return x + s


CASES.pure("cheap_mod_loop_10", mod_loop_10, lambda: [(vec(2), s) for s in (1, 2, 3, 4)],
           backends=("eager",), timeout_s=5.0)


def size_expr_loop(x):
    s = x.shape[0]
    for _ in range(6):
        s = s * 2 - 1
    return s, x[: s % 3]


CASES.pure("size_expr_loop", size_expr_loop, arrays(), timeout_s=8.0)


def size_poly(x):
    n = x.shape[0]
    return (n * n + 3 * n + 2) // (n + 1), (n + 1) * (n - 1) - n * n


CASES.pure("size_polynomial", size_poly, arrays())


def size_hash_loop(x, s):
    for i in range(4):
        s = (s * 31 + i) % 97
    return x[: s % len(x)], s


CASES.pure("size_hash_mod_loop", size_hash_loop, lambda: [(vec(5), s) for s in (1, 2, 3, 50)],
           timeout_s=8.0)


# ----- dynamic ints used in control flow and containers ----------------------------------------
def int_in_range_list(n):
    return [i * i for i in range(n)]


CASES.pure("int_range_comprehension", int_in_range_list, ints((2, 3, 0, 1, 5)))


def tuple_of_ints(x, n):
    return (n, n + 1), [n] * 2, {"n": n}


CASES.pure("int_in_containers", tuple_of_ints, arr_int((2, 3, 4)))


def dynamic_int_as_axis(x, axis):
    return x.sum(axis=axis)


CASES.pure("int_as_axis", dynamic_int_as_axis,
           lambda: [(mat(3, 4), a) for a in (0, 1, -1, 0, 2)])


def int_list_index(n):
    items = ["a", "b", "c", "d"]
    return items[n], items[-n:]


CASES.pure("int_list_index", int_list_index, ints((1, 2, 3, 0, -1, 4)))


def str_times_int(n):
    return "ab" * n, "-".join(["x"] * n)


CASES.pure("str_times_int", str_times_int, ints((2, 3, 0, -1)))


def chr_ord(n):
    return chr(65 + n), ord("a") + n, str(n).zfill(3)


CASES.pure("chr_ord_int", chr_ord, ints((2, 3, 4, 25)))


def int_float_mix(x, n):
    f = n * 0.5
    return f, type(f), x * f, n / 4 == 0.5


CASES.pure("int_float_mix", int_float_mix, arr_int((2, 3, 4, 5)))


def sizes_of_two(x, y):
    return x.shape[0] == y.shape[0], x.shape[0] + y.shape[0], str(x.shape[0] * y.shape[0])


CASES.pure("sizes_of_two_arrays", sizes_of_two,
           lambda: [(vec(a), vec(b)) for a, b in ((2, 2), (3, 4), (4, 4), (5, 3))])


def broadcast_dynamic(x, y):
    return x + y


CASES.pure("broadcast_error_message", broadcast_dynamic,
           lambda: [(vec(a), vec(b)) for a, b in ((2, 2), (3, 3), (4, 3), (5, 1))])


def concat_sizes(x, y):
    z = np.concatenate([x, y])
    return z, z.shape[0], str(len(z))


CASES.pure("concat_sizes", concat_sizes, lambda: [(vec(a), vec(b)) for a, b in ((2, 1), (3, 2), (1, 4), (5, 5))])


@CASES.case("int_kw_default_dynamic")
def _int_kw_default():
    def f(x, *, n=2):
        return x * n, str(n), isinstance(n, int)
    return Program(f, [call(vec(2), n=n) for n in (2, 3, 4, -1)])


def float_of_int_arg(x, n):
    return float(n), n * 1.0, complex(n)


CASES.pure("float_of_int_arg", float_of_int_arg, arr_int((2, 3, 0, -2)))


def mixed_sizes_and_dtypes(x):
    return x.sum(), x.dtype, str(x.dtype), x.shape[0] * x.itemsize


CASES.pure("changing_dtype_and_size", mixed_sizes_and_dtypes,
           lambda: [(vec(2, np.float32),), (vec(3, np.float64),), (vec(4, np.int32),),
                    (vec(5, np.int64),), (vec(2, np.bool_),)])


def nbytes_of(x):
    return x.nbytes, x.strides, x.itemsize


CASES.pure("nbytes_strides", nbytes_of, matrices())


# ----- more int and size functions ---------------------------------------------------------------
def math_int_functions(n):
    return math.comb(n + 2, 2), math.gcd(n, 6), math.factorial(min(abs(n), 20)), math.isqrt(abs(n))


CASES.pure("math_int_functions", math_int_functions, ints((2, 3, 7, 0, -4, 25)))


def round_negative_ndigits(n):
    return round(n, -1), round(n * 5, -1), type(round(n, -1))


CASES.pure("round_int_negative_ndigits", round_negative_ndigits, ints((2, 3, 15, 25, -35)))


def modular_inverse(n):
    return pow(n, -1, 7)


CASES.pure("pow_modular_inverse", modular_inverse, ints((2, 3, 4, 7)))


def thousands_format(n):
    return format(n, ","), f"{n:_}", f"{n:+}", f"{n:e}"


CASES.pure("format_thousands", thousands_format, ints((2, 3, 12345, 10**20, -7)))


def operator_index(x, n):
    import operator
    return operator.index(n), n.__index__(), x[operator.index(n) % len(x)]


CASES.pure("operator_index_int", operator_index, arr_int((2, 3, 4, -1)))


def size_shaped_zeros(x):
    return np.zeros((x.shape[0], 2)), np.ones((2, len(x)), dtype=np.int32).sum(axis=0)


CASES.pure("zeros_of_size_tuple", size_shaped_zeros, arrays())


def size_reshape_halves(x):
    return x.reshape(x.shape[0] // 2, 2)


CASES.pure("reshape_by_size_odd_error", size_reshape_halves, arrays((2, 4, 6, 3)))


def size_range_step(x):
    return list(range(0, 10, x.shape[0])), sum(range(x.shape[0])), list(range(x.shape[0]))[-1:]


CASES.pure("size_as_range_step", size_range_step, arrays())


def size_set_membership(x):
    n = x.shape[0]
    return n in {2, 3}, {n: "a"}.get(3, "-"), sorted([n, 3, 1]), [n] * 2 == [n, n]


CASES.pure("size_in_set_and_lists", size_set_membership, arrays())


def float_arg_methods(x, f):
    return f.is_integer(), f.as_integer_ratio(), f.hex(), x * f


CASES.pure("float_arg_methods", float_arg_methods,
           lambda: [(vec(2), v) for v in (1.5, 2.0, 0.1, -3.25)])


def int_true_div_exact(n):
    return n / 3 * 3 == n, float(n) == n, n / 10**20


CASES.pure("int_true_division_exactness", int_true_div_exact, ints((2, 3, 10**17 + 1, 2**60)))


def dynamic_int_to_dtype(x, n):
    return np.array([n]).dtype, np.asarray(n).dtype, (x + n).dtype


CASES.pure("int_to_array_dtype", dynamic_int_to_dtype,
           lambda: [(vec(2, np.int8), n) for n in (2, 3, 2**40, -1)])


def size_minus_size(x, y):
    return x.shape[0] - y.shape[0], x[: x.shape[0] - y.shape[0]]


CASES.pure("size_difference_negative", size_minus_size,
           lambda: [(vec(a), vec(b)) for a, b in ((3, 1), (4, 2), (2, 3), (5, 5))])
