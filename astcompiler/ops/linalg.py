"""``np.linalg``: norm, solve, inv, cholesky, det, slogdet, eigh, eigvalsh, eig, eigvals, qr,
lstsq, svd, pinv, matrix_power, matrix_rank, multi_dot, cond.

Op names are ``linalg_<function>``. All ``extern`` (LAPACK through NumPy, called from the numba
backend's wrapper).

TUPLE OUTPUTS: ``slogdet``, ``eigh``, ``eig``, ``qr`` (except ``mode='r'``), ``lstsq`` and ``svd``
(with ``compute_uv=True``) return NumPy named tuples. They are registered with
``tuple_output=True`` and need tuple-output support in capture (not there yet).

Shape checks NumPy does before any computation (a 1-d input, a non-square matrix) are repeated in
the normalizers so that they raise ``LinAlgError`` on proxies too; anything that depends on the
values (a singular matrix) is only found by ``impl``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exc import Unsupported
from ._args import axis_index, freeze, ndim_of, reject_out
from .registry import register

LinAlgError = np.linalg.LinAlgError


def _check_matrix(a: Any) -> None:
    ndim = ndim_of(a)
    if ndim < 2:
        raise LinAlgError(f"{ndim}-dimensional array given. Array must be at least "
                          f"two-dimensional")


def _check_square(a: Any) -> None:
    _check_matrix(a)
    shape = getattr(a, "shape", None)
    if shape is None:
        return
    rows, cols = shape[-2], shape[-1]
    if isinstance(rows, (int, np.integer)) and isinstance(cols, (int, np.integer)) \
            and rows != cols:
        raise LinAlgError("Last 2 dimensions of the array must be square")


def _square_normalizer():
    def normalize(a):
        _check_square(a)
        return (freeze(a),), {}
    return normalize


def _uplo(UPLO: Any) -> str:
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return UPLO


# ---------------------------------------------------------------- norm


def _norm_axis(axis: Any, ndim: int) -> tuple[int, ...] | None:
    if axis is None:
        return None
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if len(axes) > 2:
        raise ValueError("Improper number of dimensions to norm.")
    out = tuple(axis_index(a, ndim) for a in axes)
    if len(out) == 2 and out[0] == out[1]:
        raise ValueError("Duplicate axes given.")
    return out


def _norm_normalize(x, ord=None, axis=None, keepdims=False):
    return (freeze(x),), {"ord": ord, "axis": _norm_axis(axis, ndim_of(x)),
                          "keepdims": bool(keepdims)}


def _norm(x: Any, ord: Any = None, axis: tuple | None = None, keepdims: bool = False) -> Any:
    return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


register("linalg_norm", _norm, kind="extern", threaded=True, normalize=_norm_normalize,
         aliases=(np.linalg.norm,),
         doc="np.linalg.norm(x, ord, axis, keepdims): axis None or a tuple (1: vector, "
             "2: matrix norm)")

# ---------------------------------------------------------------- square-matrix functions

for _name in ("inv", "det", "eigvals"):
    register(f"linalg_{_name}", getattr(np.linalg, _name), kind="extern", threaded=True,
             normalize=_square_normalizer(), aliases=(getattr(np.linalg, _name),),
             doc=f"np.linalg.{_name}(a)")

for _name in ("slogdet", "eig"):
    register(f"linalg_{_name}", getattr(np.linalg, _name), kind="extern", threaded=True,
             normalize=_square_normalizer(), aliases=(getattr(np.linalg, _name),),
             tuple_output=True, doc=f"TUPLE OUTPUT: np.linalg.{_name}(a)")


def _solve_normalize(a, b):
    _check_square(a)
    return (freeze(a), freeze(b)), {}


register("linalg_solve", np.linalg.solve, kind="extern", threaded=True, normalize=_solve_normalize,
         aliases=(np.linalg.solve,), doc="np.linalg.solve(a, b)")


def _cholesky_normalize(a, /, *, upper=False):
    _check_square(a)
    return (freeze(a),), {"upper": bool(upper)}


def _cholesky(a: Any, upper: bool = False) -> np.ndarray:
    return np.linalg.cholesky(a, upper=upper)


register("linalg_cholesky", _cholesky, kind="extern", threaded=True, normalize=_cholesky_normalize,
         aliases=(np.linalg.cholesky,), doc="np.linalg.cholesky(a, upper)")


def _eigh_normalize(a, UPLO="L"):
    _check_square(a)
    return (freeze(a), _uplo(UPLO)), {}


register("linalg_eigh", np.linalg.eigh, kind="extern", threaded=True, normalize=_eigh_normalize,
         aliases=(np.linalg.eigh,), tuple_output=True,
         doc="TUPLE OUTPUT: np.linalg.eigh(a, UPLO) -> (eigenvalues, eigenvectors)")
register("linalg_eigvalsh", np.linalg.eigvalsh, kind="extern", threaded=True,
         normalize=_eigh_normalize,
         aliases=(np.linalg.eigvalsh,), doc="np.linalg.eigvalsh(a, UPLO): eigenvalues only")


def _matrix_power_normalize(a, n):
    _check_square(a)
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError("exponent must be an integer")
    return (freeze(a), int(n)), {}


def _matrix_power_returns_input(args: tuple, kwargs: dict) -> bool:
    return args[1] == 1  # NumPy returns ``a`` itself for n == 1


register("linalg_matrix_power", np.linalg.matrix_power, kind="extern", threaded=True,
         normalize=_matrix_power_normalize, aliases=(np.linalg.matrix_power,),
         returns_input=_matrix_power_returns_input, doc="np.linalg.matrix_power(a, n)")

# ---------------------------------------------------------------- factorizations, solvers


def _qr_normalize(a, mode="reduced"):
    _check_matrix(a)
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"Unrecognized mode '{mode}'")
    if mode == "raw":
        raise Unsupported("np.linalg.qr(mode='raw') is not supported")
    return (freeze(a), mode), {}


register("linalg_qr", np.linalg.qr, kind="extern", threaded=True, normalize=_qr_normalize,
         aliases=(np.linalg.qr,), tuple_output=True,
         doc="TUPLE OUTPUT (except mode='r'): np.linalg.qr(a, mode) -> (Q, R)")


def _lstsq_normalize(a, b, rcond=None):
    _check_matrix(a)
    return (freeze(a), freeze(b)), {"rcond": rcond}


def _lstsq(a: Any, b: Any, rcond: Any = None) -> tuple:
    return np.linalg.lstsq(a, b, rcond=rcond)


register("linalg_lstsq", _lstsq, kind="extern", threaded=True, normalize=_lstsq_normalize,
         aliases=(np.linalg.lstsq,), tuple_output=True,
         doc="TUPLE OUTPUT: np.linalg.lstsq(a, b, rcond) -> (x, residuals, rank, s); "
             "rank is a Python int")


def _svd_normalize(a, full_matrices=True, compute_uv=True, hermitian=False):
    _check_matrix(a)
    return (freeze(a),), {"full_matrices": bool(full_matrices), "compute_uv": bool(compute_uv),
                          "hermitian": bool(hermitian)}


def _svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
         hermitian: bool = False) -> Any:
    return np.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv,
                         hermitian=hermitian)


register("linalg_svd", _svd, kind="extern", threaded=True,
         normalize=_svd_normalize, aliases=(np.linalg.svd,),
         tuple_output=True,
         doc="TUPLE OUTPUT (unless compute_uv=False): np.linalg.svd -> (U, S, Vh)")

_NO_VALUE = object()


def _pinv_normalize(a, rcond=None, hermitian=False, *, rtol=_NO_VALUE):
    _check_matrix(a)
    kwargs: dict[str, Any] = {"hermitian": bool(hermitian)}
    if rcond is not None:
        kwargs["rcond"] = freeze(rcond)
    if rtol is not _NO_VALUE:
        kwargs["rtol"] = freeze(rtol)
    return (freeze(a),), kwargs


def _pinv(a: Any, **kwargs: Any) -> np.ndarray:
    return np.linalg.pinv(a, **kwargs)


register("linalg_pinv", _pinv, kind="extern", threaded=True, normalize=_pinv_normalize,
         aliases=(np.linalg.pinv,), doc="np.linalg.pinv(a, [rcond], hermitian, [rtol])")


def _matrix_rank_normalize(A, tol=None, hermitian=False, *, rtol=None):
    return (freeze(A),), {"tol": freeze(tol), "hermitian": bool(hermitian), "rtol": freeze(rtol)}


def _matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, rtol: Any = None) -> Any:
    return np.linalg.matrix_rank(A, tol=tol, hermitian=hermitian, rtol=rtol)


register("linalg_matrix_rank", _matrix_rank, kind="extern", threaded=True,
         normalize=_matrix_rank_normalize,
         aliases=(np.linalg.matrix_rank,), doc="np.linalg.matrix_rank(A, tol, hermitian, rtol)")


def _multi_dot_normalize(arrays, *, out=None):
    reject_out(out, "linalg.multi_dot")
    arrays = tuple(freeze(a) for a in arrays)
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    return (arrays,), {}


register("linalg_multi_dot", np.linalg.multi_dot, kind="extern", threaded=True,
         normalize=_multi_dot_normalize, aliases=(np.linalg.multi_dot,),
         doc="np.linalg.multi_dot(arrays): arrays is a tuple")


def _cond_normalize(x, p=None):
    _check_matrix(x)
    return (freeze(x), p), {}


register("linalg_cond", np.linalg.cond, kind="extern", threaded=True, normalize=_cond_normalize,
         aliases=(np.linalg.cond,), doc="np.linalg.cond(x, p)")

__all__: list[str] = []
