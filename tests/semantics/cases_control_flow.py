"""Group 4: types across control flow, and Python scalar rules in compiled loops.

Data-dependent branches whose sides produce different types or dtypes, variables bound on one
side only (``UnboundLocalError``), Python scalars in loops (``1.0/0``, ``(-1.0)**0.5``,
``round(2.5)``, ``10 // 0``, ints beyond 64 bits), and while/break/continue.
"""

from __future__ import annotations

import math

import numpy as np

import astcompiler as ac

from .harness import CaseRegistry, Program
from .values import mat, vec

CASES = CaseRegistry("control_flow")


def signed(values, dtype=np.float64):
    """Calls whose data make a data-dependent branch go both ways."""
    return lambda: [(np.array(v, dtype=dtype),) for v in values]


MIXED = ([1.0, 2.0], [-1.0, -2.0, -3.0], [3.0, -1.0, 4.0], [-5.0, 1.0], [0.0, 0.0, 0.0, 0.0])


# ----- data-dependent branches with different types or dtypes -----------------------------------
def branch_dtype(x):
    if x.sum() > 0:
        return x.astype(np.float32) / 100  # issue example: never merged with the float64 side
    return x / 100


CASES.pure("branch_sides_dtype", branch_dtype, signed(MIXED))


def branch_dtype_int(x):
    if x.max() > 2:
        y = x.astype(np.int64)
    else:
        y = x * 1.5
    return y, y.dtype


CASES.pure("branch_sides_int_float", branch_dtype_int, signed(MIXED))


def branch_python_types(x):
    if x.sum() > 0:
        r = 1
    else:
        r = 1.0
    return r, type(r)


CASES.pure("branch_sides_python_type", branch_python_types, signed(MIXED))


def branch_container_types(x):
    out = [x[0]] if x[0] > 0 else (x[0],)
    return out


CASES.pure("branch_sides_list_tuple", branch_container_types, signed(MIXED))


def branch_shapes(x):
    if x.mean() > 0:
        y = x.reshape(1, -1)
    else:
        y = x[:1]
    return y + 1


CASES.pure("branch_sides_shape", branch_shapes, signed(MIXED))


def branch_none(x):
    r = None
    if x.min() < 0:
        r = x.min()
    return r


CASES.pure("branch_none_or_value", branch_none, signed(MIXED))


def branch_bool_vs_array(x):
    return x > 0 if x.sum() > 0 else False


CASES.pure("branch_bool_or_array", branch_bool_vs_array, signed(MIXED))


def branch_numpy_scalar(x):
    v = x.sum()
    if v > 0:
        v = float(v)
    return v, type(v)


CASES.pure("branch_numpy_or_python_scalar", branch_numpy_scalar, signed(MIXED))


def branch_float32_accumulate(x):
    acc = np.zeros(1, dtype=np.float32)
    for v in x:
        if v > 0:
            acc = acc + v
        else:
            acc = acc.astype(np.float64) - v
    return acc


CASES.pure("loop_branch_dtype_changes", branch_float32_accumulate, signed(MIXED, np.float32))


def branch_int_overflow_dtype(x):
    if x.sum() > 0:
        x = x.astype(np.int8)
    return x * 100


CASES.pure("branch_int8_wraps", branch_int_overflow_dtype, signed(MIXED))


def nested_branches(x):
    if x[0] > 0:
        if x.sum() > 3:
            return "big"
        return x.sum()
    elif x[0] < -1:
        return [x.min()]
    return None


CASES.pure("nested_branch_types", nested_branches, signed(MIXED))


def ternary_types(x):
    return (x * 2) if x.any() else 0


CASES.pure("ternary_array_or_int", ternary_types, signed(MIXED))


def where_vs_branch(x):
    a = np.where(x > 0, x, 0)
    b = x if x.all() else x * 0
    return a, b


CASES.pure("where_and_branch", where_vs_branch, signed(MIXED))


# ----- variables bound on one side only ---------------------------------------------------------
def one_side_binding(x):
    if x.sum() > 0:
        y = x * 2
    return y  # noqa: F821 - UnboundLocalError on the other side


CASES.pure("unbound_local_one_side", one_side_binding, signed(MIXED))


def one_side_binding_loop(x):
    for v in x:
        if v > 10:
            found = v
    return found  # noqa: F821


CASES.pure("unbound_local_loop", one_side_binding_loop,
           signed(([11.0, 1.0], [1.0, 2.0, 3.0], [12.0, 13.0], [0.0])))


def one_side_binding_while(x):
    i = 0
    while i < x.shape[0]:
        if x[i] < 0:
            last_neg = i
        i += 1
    return last_neg  # noqa: F821


CASES.pure("unbound_local_while", one_side_binding_while, signed(MIXED))


def deleted_then_used(x):
    y = x + 1
    if x.sum() > 0:
        del y
    return y


CASES.pure("unbound_after_del", deleted_then_used, signed(MIXED))


def unbound_after_break(x):
    if x.sum() > 0:
        y = 1
    ac.graph_break()
    return x * y


CASES.pure("unbound_local_across_break", unbound_after_break, signed(MIXED))


def except_binding(x):
    try:
        v = x[5]
    except IndexError:
        pass
    return v


CASES.pure("unbound_after_except", except_binding,
           signed(([1.0] * 6, [1.0, 2.0], [1.0] * 7, [0.0])))


def unbound_from_empty_loop(x):
    for i in range(x.shape[0] - 2):
        last = i
    return last


CASES.pure("unbound_from_empty_loop", unbound_from_empty_loop, lambda: [(vec(n),) for n in (4, 5, 2, 1, 3)])


# ----- Python scalars in compiled loops --------------------------------------------------------
def float_div_zero_loop(x, d):
    total = 0.0
    for i in range(3):
        total += 1.0 / (d - i)
    return x + total


CASES.pure("float_div_zero_in_loop", float_div_zero_loop,
           lambda: [(vec(2), d) for d in (5.0, 6.0, 1.0, 7.0, 2.0)])


def one_over_zero(x, d):
    return x * (1.0 / d)


CASES.pure("float_div_zero", one_over_zero, lambda: [(vec(2), d) for d in (2.0, 4.0, 0.0, -0.0, 1.0)])


def int_floordiv_zero(x, d):
    return x + 10 // d


CASES.pure("int_floordiv_zero", int_floordiv_zero, lambda: [(vec(2), d) for d in (2, 3, 0, -3, 1)])


def int_mod_zero(x, d):
    return x + 10 % d


CASES.pure("int_mod_zero", int_mod_zero, lambda: [(vec(2), d) for d in (2, 3, 0, 4)])


def float_mod_zero(x, d):
    return x + 10.0 % d


CASES.pure("float_mod_zero", float_mod_zero, lambda: [(vec(2), d) for d in (2.0, 3.0, 0.0, 4.0)])


def negative_power_complex(x, base):
    r = base ** 0.5
    return r, type(r)


CASES.pure("negative_base_power_complex", negative_power_complex,
           lambda: [(vec(2), b) for b in (4.0, 9.0, -1.0, 2.0, -4.0)])


def power_in_loop(x, base):
    acc = 0
    for i in range(3):
        acc = acc + (base - i) ** 0.5
    return x * 0 + abs(acc), type(acc)


CASES.pure("power_complex_in_loop", power_in_loop,
           lambda: [(vec(2), b) for b in (5.0, 6.0, 1.0, 7.0)])


def round_half_even(x, v):
    return round(v), round(v, 1), type(round(v)), x * round(v)


CASES.pure("round_half_even", round_half_even,
           lambda: [(vec(2), v) for v in (2.5, 3.5, -2.5, 0.5, 1.25, 2.675)])


def round_in_loop(x):
    total = 0
    for i in range(x.shape[0]):
        total += round(i + 0.5)
    return total, type(total)


CASES.pure("round_in_loop", round_in_loop, lambda: [(vec(n),) for n in (2, 3, 4, 5)])


def int_overflow_loop(x, n):
    acc = 1
    for _ in range(n):
        acc = acc * 1000
    return x + (acc > 0), acc


CASES.pure("int_overflow_in_loop", int_overflow_loop,
           lambda: [(vec(2), n) for n in (2, 3, 7, 8, 25)])


def int_square_loop(x):
    v = 3
    for _ in range(x.shape[0] + 3):
        v = v * v
    return v % 1000003, v.bit_length()


CASES.pure("int_square_growth_loop", int_square_loop, lambda: [(vec(n),) for n in (1, 2, 3, 4)])


def int_neg_overflow(x, n):
    acc = -1
    for _ in range(n):
        acc *= 2 ** 20
    return acc


CASES.pure("int_negative_overflow_loop", int_neg_overflow,
           lambda: [(vec(2), n) for n in (1, 2, 3, 4)])


def int_true_division_loop(x):
    acc = 1
    for i in range(1, x.shape[0] + 1):
        acc = acc / i
    return acc, type(acc)


CASES.pure("int_true_division_becomes_float", int_true_division_loop,
           lambda: [(vec(n),) for n in (2, 3, 4, 5)])


def float_inf_nan_loop(x, v):
    acc = v
    for _ in range(3):
        acc = acc * 1e200
    return acc, acc - acc, x * 0 + (acc == acc)


CASES.pure("float_inf_nan_in_loop", float_inf_nan_loop,
           lambda: [(vec(2), v) for v in (1.0, 2.0, -1.0, 0.0)])


def float_to_int_conversion(x, v):
    return int(v), math.floor(v), math.trunc(v), int(-v)


CASES.pure("float_to_int_conversion", float_to_int_conversion,
           lambda: [(vec(2), v) for v in (2.7, 3.2, -2.7, 0.0, 1e20)])


def int_of_inf(x, v):
    return int(v)


CASES.pure("int_of_inf_nan_raises", int_of_inf,
           lambda: [(vec(2), v) for v in (2.5, 3.5, float("inf"), float("nan"))])


def math_domain_error(x, v):
    return math.sqrt(v) + math.log(v + 1)


CASES.pure("math_domain_error", math_domain_error,
           lambda: [(vec(2), v) for v in (4.0, 9.0, -1.0, 0.0, -4.0)])


def mixed_int_float_loop(x):
    acc = 0
    for i in range(x.shape[0]):
        if i % 2:
            acc += 0.5
        else:
            acc += 1
    return acc, type(acc)


CASES.pure("mixed_int_float_accumulator", mixed_int_float_loop, lambda: [(vec(n),) for n in (1, 2, 3, 4)])


def bool_arith_loop(x):
    acc = True
    for v in x:
        acc = acc + (v > 1)
    return acc, type(acc)


CASES.pure("bool_arith_accumulator", bool_arith_loop, lambda: [(vec(n),) for n in (1, 2, 3, 4)])


def divmod_negative_loop(x):
    out = []
    for i in range(-x.shape[0], x.shape[0]):
        out.append(divmod(i, 3))
    return out


CASES.pure("divmod_negative_loop", divmod_negative_loop, lambda: [(vec(n),) for n in (1, 2, 3, 4)])


def float_floor_div(x, a):
    return a // 0.3, a % 0.3, -a // 2, x + a // 1


CASES.pure("float_floordiv_mod", float_floor_div,
           lambda: [(vec(2), a) for a in (1.0, 2.0, -1.0, 0.7)])


def scalar_from_array_loop(x):
    best = float("-inf")
    for v in x:
        if v > best:
            best = v
    return best, type(best)


CASES.pure("best_minus_inf_loop", scalar_from_array_loop, signed(MIXED))


def scalar_float_from_array_loop(x):
    best = float("-inf")
    for i in range(x.shape[0]):
        best = max(best, float(x[i]))
    return best


CASES.pure("best_python_float_loop", scalar_float_from_array_loop, signed(MIXED))


# ----- while / break / continue ----------------------------------------------------------------
def while_break(x):
    i = 0
    total = 0.0
    while True:
        if i >= x.shape[0]:
            break
        total += x[i]
        i += 1
    return total, i


CASES.pure("while_true_break", while_break, signed(MIXED))


def for_continue(x):
    out = []
    for v in x:
        if v < 0:
            continue
        out.append(v * 2)
    return out


CASES.pure("for_continue", for_continue, signed(MIXED))


def for_else(x):
    for i, v in enumerate(x):
        if v < 0:
            break
    else:
        return "no negative"
    return i


CASES.pure("for_else", for_else, signed(MIXED))


def while_else(x):
    i = 0
    while i < x.shape[0]:
        if x[i] == 0:
            break
        i += 1
    else:
        i = -1
    return i


CASES.pure("while_else", while_else, signed(MIXED))


def nested_loop_break(x):
    pairs = []
    for i in range(x.shape[0]):
        for j in range(x.shape[0]):
            if j > i:
                break
            if (i + j) % 2:
                continue
            pairs.append((i, j))
    return pairs


CASES.pure("nested_loop_break_continue", nested_loop_break, lambda: [(vec(n),) for n in (1, 2, 3, 4)])


def data_dependent_while(x):
    y = x.copy()
    steps = 0
    while np.abs(y).max() > 1.0 and steps < 20:
        y = y / 2
        steps += 1
    return y, steps


CASES.pure("data_dependent_while", data_dependent_while, signed(MIXED))


def loop_over_rows(x):
    total = np.zeros(x.shape[1])
    for row in x:
        total = total + row
    return total


CASES.pure("loop_over_rows", loop_over_rows,
           lambda: [(mat(r, c),) for r, c in ((2, 3), (3, 3), (4, 2), (1, 2))])


def loop_with_array_accumulator_break(x):
    acc = x[:1] * 0
    for i in range(x.shape[0]):
        acc = acc + x[i]
        if acc[0] > 3:
            break
    return acc, i


CASES.pure("loop_array_break_data", loop_with_array_accumulator_break,
           lambda: [(vec(n),) for n in (1, 2, 3, 4, 5)])


def loop_range_step(x):
    return [i for i in range(x.shape[0], -1, -2)], list(range(1, x.shape[0], 3))


CASES.pure("range_negative_step", loop_range_step, lambda: [(vec(n),) for n in (1, 2, 3, 4, 7)])


def loop_enumerate_zip(x, y):
    out = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        out += i * a * b
    return out


CASES.pure("enumerate_zip_loop", loop_enumerate_zip,
           lambda: [(vec(a), vec(b)) for a, b in ((2, 2), (3, 4), (4, 3), (1, 1))])


def loop_reversed_sorted(x):
    return [float(v) for v in reversed(x)], sorted(x.tolist(), reverse=True)


CASES.pure("reversed_sorted_loop", loop_reversed_sorted, signed(MIXED))


def loop_break_in_try(x):
    n = 0
    for v in x:
        try:
            if v < 0:
                break
            n += 1
        finally:
            n += 10
    return n


CASES.pure("break_inside_try_finally", loop_break_in_try, signed(MIXED))


def loop_graph_break_inside(x):
    total = 0
    for i in range(x.shape[0]):
        total += i
        if i == 1:
            ac.graph_break()
    return x + total


CASES.pure("graph_break_inside_loop", loop_graph_break_inside, lambda: [(vec(n),) for n in (1, 2, 3, 4)])


def loop_modifies_array(x):
    y = x.copy()
    for i in range(1, y.shape[0]):
        y[i] = y[i - 1] + y[i]
    return y


CASES.pure("loop_prefix_sum", loop_modifies_array, lambda: [(vec(n),) for n in (1, 2, 3, 4)])


def loop_int_array_overflow(x):
    y = x.astype(np.int8)
    for _ in range(3):
        y = y * 10
    return y


CASES.pure("loop_int8_array_wraps", loop_int_array_overflow, lambda: [(vec(n),) for n in (1, 2, 3, 4)])


def loop_uint_underflow(x):
    y = x.astype(np.uint8)
    return y - 5, (y - 5).dtype


CASES.pure("uint8_underflow_wraps", loop_uint_underflow, lambda: [(vec(n),) for n in (1, 2, 3, 4)])


def boolean_short_circuit(x):
    calls = []

    def check(v):
        calls.append(v)
        return v > 1

    ok = check(x[0]) and check(x[-1]) or check(x.sum())
    return ok, len(calls)


CASES.pure("short_circuit_and_or", boolean_short_circuit, signed(MIXED))


def chained_comparison(x):
    a = x[0]
    return bool(-1 < a < 2), 0 <= x.shape[0] < 3 <= 5


CASES.pure("chained_comparison", chained_comparison, signed(MIXED))


def array_truth_value(x):
    if x:
        return 1
    return 0


CASES.pure("array_truth_value_error", array_truth_value,
           signed(([1.0], [0.0], [1.0, 2.0], [2.0])))


def if_on_size(x):
    if x.shape[0] > 2:
        return x[:2].sum()
    return x.sum() * 10


CASES.pure("branch_on_dynamic_size", if_on_size, lambda: [(vec(n),) for n in (2, 3, 1, 4, 2)])


def match_statement(x, cmd):
    match cmd:
        case "double":
            return x * 2
        case ("scale", k):
            return x * k
        case {"shift": s}:
            return x + s
        case _:
            return None


CASES.pure("match_statement", match_statement,
           lambda: [(vec(2), "double"), (vec(3), ("scale", 3)), (vec(3), {"shift": 1}), (vec(4), 5),
                    (vec(2), ("scale", 0.5))])


def assert_statement(x):
    assert x.sum() > 0, f"sum is {x.sum()}"
    return x


CASES.pure("assert_fails", assert_statement, signed(MIXED))


def loop_counts_types(x):
    counts = {}
    for v in x.tolist() + [1, 1.0, True]:
        counts[type(v).__name__] = counts.get(type(v).__name__, 0) + 1
    return counts


CASES.pure("loop_type_counts", loop_counts_types, signed(MIXED))


# ----- Python scalar rules that C (and numba) do differently ------------------------------------
def float_mod_negative_loop(x):
    acc = 1.0
    out = []
    for i in range(x.shape[0]):
        acc = (acc - 3.7) % 2.0
        out.append(round(acc, 6))
    return out, -7.5 % 2, 7.5 % -2


CASES.pure("float_mod_sign_in_loop", float_mod_negative_loop, lambda: [(vec(n),) for n in (2, 3, 4)])


def int_floordiv_negative_loop(x):
    out = []
    for i in range(-x.shape[0], 2):
        out.append((i // 2, i % 3, -i // 3))
    return out


CASES.pure("int_floordiv_sign_in_loop", int_floordiv_negative_loop, lambda: [(vec(n),) for n in (2, 3, 4)])


def math_floor_type_loop(x):
    out = 0
    for i in range(x.shape[0]):
        out += math.floor(x[i] / 3) + math.ceil(-x[i] / 3)
    return out, type(out), type(math.floor(1.5))


CASES.pure("math_floor_int_type_in_loop", math_floor_type_loop, lambda: [(vec(n),) for n in (2, 3, 4)])


def int_pow_negative_exponent_loop(x):
    acc = 0
    for i in range(x.shape[0]):
        acc += 2 ** (i - 2)
    return acc, type(acc)


CASES.pure("int_pow_negative_exponent_in_loop", int_pow_negative_exponent_loop,
           lambda: [(vec(n),) for n in (1, 2, 3, 4)])


def min_max_nan_order_loop(x):
    best = float("nan")
    worst = 0.0
    for i in range(x.shape[0]):
        best = max(best, float(x[i]))
        worst = min(float("nan"), worst)
    return best, worst


CASES.pure("min_max_nan_argument_order", min_max_nan_order_loop, lambda: [(vec(n),) for n in (2, 3, 4)])


def element_floordiv_zero_loop(x):
    total = 0.0
    for i in range(x.shape[0]):
        total += float(x[i]) // (i - 1)
    return total


CASES.pure("python_float_floordiv_zero_in_loop", element_floordiv_zero_loop,
           lambda: [(vec(n),) for n in (1, 2, 3, 4)])


def int_of_float_loop(x):
    out = []
    for i in range(x.shape[0]):
        out.append(int(x[i] - 2.5))
    return out


CASES.pure("int_truncates_toward_zero_in_loop", int_of_float_loop, lambda: [(vec(n),) for n in (2, 3, 4, 5)])


def abs_int_min_loop(x, n):
    acc = n
    for _ in range(x.shape[0]):
        acc = -abs(acc) * 2
    return acc


CASES.pure("abs_negation_growth_in_loop", abs_int_min_loop,
           lambda: [(vec(k), n) for k, n in ((2, 3), (3, 5), (4, -(2 ** 62)), (2, 2 ** 63 - 1))])


def sum_of_bools_loop(x):
    count = 0
    for v in x:
        count += v > 2
    return count, type(count)


CASES.pure("sum_of_np_bools_in_loop", sum_of_bools_loop, lambda: [(vec(n),) for n in (2, 3, 4)])


def round_ndigits_loop(x):
    out = []
    for i in range(x.shape[0]):
        out.append(round(i * 0.125 + 0.0625, 2))
        out.append(round(i + 0.5, 0))
    return out


CASES.pure("round_ndigits_in_loop", round_ndigits_loop, lambda: [(vec(n),) for n in (2, 3, 4)])


def float_int_compare_loop(x, n):
    hits = 0
    for i in range(x.shape[0]):
        if n + i == float(n + i) + 0.0:
            hits += 1
    return hits


CASES.pure("big_int_float_equality_in_loop", float_int_compare_loop,
           lambda: [(vec(2), 3), (vec(3), 4), (vec(3), 2 ** 53 + 1), (vec(2), 2 ** 60 + 3)])


def try_return_in_loop(x):
    out = []
    for i in range(x.shape[0]):
        try:
            if i == 2:
                return out, "early"
            out.append(i)
        finally:
            out.append(-1)
    return out, "end"


CASES.pure("return_in_try_in_loop", try_return_in_loop, lambda: [(vec(n),) for n in (2, 3, 4)])


def exception_mid_loop(x, log):
    for i in range(x.shape[0]):
        log.append(i)
        if x[i] > 2:
            raise ValueError(f"bad value at {i}")
    return len(log)


CASES.add("exception_mid_loop_effects", lambda: Program(
    exception_mid_loop, [(vec(2), []), (vec(3), []), (vec(1), []), (vec(4), [])]))


def loop_not_run_keeps_type(x, f):
    v = float(x.mean())
    while x.sum() > f:
        v = x[0]  # np.float64 only when the loop body runs
        break
    return v, type(v)


CASES.pure("loop_skipped_keeps_python_float", loop_not_run_keeps_type,
           lambda: [(vec(2), 10.0), (vec(3), 0.0), (vec(4), 100.0), (vec(2), -1.0)])


def round_numpy_scalar(x):
    return round(x[0]), type(round(x[0])), round(x[0], 1), type(round(x[0], 1))


CASES.pure("round_of_numpy_scalar", round_numpy_scalar,
           lambda: [(vec(2) + 0.5,), (vec(3) + 0.5,), (vec(3, np.float32) + 0.25,)])


# ----- types after loops that may run zero times, `and`/`or` results (issue 9 leftovers) ---------
def while_sum_stored(x, limit):
    out = np.zeros(2)
    total = 0.0  # a Python float until the loop adds an np.float64
    i = 0
    while i < x.shape[0] and total < limit[0]:
        total = total + x[i]
        i += 1
    out[0] = total  # storing it is exact whatever its type
    out[1] = i
    return out


CASES.pure("while_float_accumulator_stored", while_sum_stored,
           lambda: [(vec(3), np.array([v])) for v in (2.0, -1.0, 100.0, 0.5, -3.0)])


def while_sum_returned(x, limit):
    total = 0.0
    while total < limit:
        total = total + x[0]
    return total, type(total)


CASES.pure("while_float_accumulator_returned", while_sum_returned,
           lambda: [(vec(3), 2.0), (vec(3), -1.0), (vec(4), 5.0), (vec(2), 0.0)])


def bound_only_by_data_loop(x, idx):
    for k in range(idx[0], idx[1]):
        last = x[k]
    return last


CASES.pure("loop_over_data_bounds_binds_only_inside", bound_only_by_data_loop,
           lambda: [(vec(4), np.array([0, 2])), (vec(4), np.array([1, 3])),
                    (vec(4), np.array([2, 2])), (vec(5), np.array([0, 5]))])


def escape_time_rows(cs, maxiter):
    out = np.zeros(cs.shape[0], np.int64)
    for k in range(cs.shape[0]):
        z = 0j  # dead after the while: its type there is never observed
        c = cs[k]
        n = 0
        while n < maxiter and abs(z) <= 2.0:
            z = z * z + c
            n += 1
        out[k] = n
    return out


CASES.pure("escape_time_complex_accumulator", escape_time_rows,
           lambda: [(np.array([0.1 + 0.1j, 1.5 + 1j, 3.0 + 0j]), 20),
                    (np.array([0.3j, -2.5 + 0j, 0.2 + 0.5j, 1j]), 30),
                    (np.array([5.0 + 0j, 0j]), 10)])


def ifexp_python_or_numpy(x):
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = np.sqrt(x[i]) if x[i] > 0 else 0.0
    r = x[0] if x[-1] > 0 else 0.0
    return out, r, type(r)


CASES.pure("ifexp_python_float_or_numpy_float", ifexp_python_or_numpy, signed(MIXED))


def and_or_operands(x, n):
    a = x[0] > 0
    return (a and x[-1]), (a or n), (n and a), (not a), (x[0] or None), (n > 1 and x.sum())


CASES.pure("and_or_return_the_deciding_operand", and_or_operands,
           lambda: [(np.array(v), n) for v, n in
                    (([1.0, 2.0], 0), ([-1.0, 2.0], 3), ([0.0, -2.0, 1.0], 2), ([2.0, 0.0], 1))])


def lazy_right_operand(x, log):
    def note(v):
        log.append(v)
        return v
    first = x[0] > 0 and note(x[0]) > 1
    second = x[-1] > 0 or note(-1) < 0
    return first, second


CASES.add("and_or_right_operand_side_effects", lambda: Program(
    lazy_right_operand, [(np.array([1.0, 2.0]), []), (np.array([-1.0, 2.0]), []),
                         (np.array([3.0, -1.0, 2.0]), []), (np.array([-2.0, -3.0]), [])]))


def guarded_index(x, i):
    ok = i < x.shape[0] and x[i] > 0
    while i < x.shape[0] and x[i] > 0:
        i += 1
    return ok, i


CASES.pure("and_right_operand_would_raise", guarded_index,
           lambda: [(vec(3), 1), (vec(3), 3), (np.array([1.0, -1.0, 2.0]), 0), (vec(4), 7)])
