"""Order statistics of the small arrays the detector reads every frame: ``np.median`` and
``np.percentile`` (linear) to the bit, without their wrappers' overhead (about 20 microseconds a call,
more than the work itself on a few hundred values). Each takes the same partition numpy takes and
combines the same elements in the same dtype, so the results are numpy's own. And
``np.linalg.lstsq``'s solution the same way (:func:`least_squares`): numpy's own LAPACK kernel
without the wrapper's checks, which cost three times the solve on the few points fitted here;
``np.linalg.norm`` along rows (:func:`row_norms`); and the largest of three colour channels
(:func:`brightest_channel`)."""

from __future__ import annotations

import math
from typing import Final

import numpy as np
from numpy.linalg import _umath_linalg

#: the float64 machine epsilon (``np.linalg.lstsq``'s default ``rcond`` is the larger side times it).
FLOAT_EPS: Final = float(np.finfo(np.float64).eps)


def median(values: np.ndarray) -> float:
    """``float(np.median(values))`` over all of ``values`` (any shape): the middle value, or
    the mean of the middle two in the array's own dtype (float64 for integers), NaN when any is NaN."""
    v = values.ravel()
    n = v.size
    if n == 0:
        return float(np.median(v))  # NaN, with numpy's warning
    k = n // 2
    inexact = v.dtype.kind == "f"
    kth = [k - 1, k] if n % 2 == 0 else [k]
    if inexact:
        kth.append(n - 1)  # the largest last: NaN sorts there
    p = v.copy()  # (np.partition's own copy and partition, without its wrapper)
    p.partition(kth)
    if inexact and math.isnan(p[n - 1]):
        return math.nan
    if n % 2:
        return float(p[k])
    if not inexact:
        return (float(p[k - 1]) + float(p[k])) / 2.0
    return float((p[k - 1] + p[k]) / 2)


def median_along(values: np.ndarray, axis: int) -> np.ndarray:
    """``np.median(values, axis=axis)`` for a float array: each middle value, or the mean of the middle
    two in the array's own dtype, NaN where any is NaN (NaN sorts last)."""
    n = values.shape[axis]
    if n == 0:
        return np.median(values, axis=axis)  # NaN, with numpy's warning
    k = n // 2
    # A full sort (vectorised) beats a partition at several points on the short rows read here, and
    # runs fastest along contiguous values: the axis is moved last in a copy (when it is not last
    # already: then np.sort's own copy is the cheaper one).
    if axis in (-1, values.ndim - 1):
        p = np.sort(values, axis=-1)
    else:
        # (np.moveaxis's own transpose, without its argument checks.)
        axis %= values.ndim
        p = values.transpose([*range(axis), *range(axis + 1, values.ndim), axis]).copy(order="C")
        p.sort(axis=-1)
    out = p[..., k] if n % 2 else (p[..., k - 1] + p[..., k]) / 2
    nan = np.isnan(p[..., n - 1])
    if nan.any():
        out = np.where(nan, np.nan, out).astype(out.dtype)
    return out


def percentile(values: np.ndarray, q: float) -> float:
    """``float(np.percentile(values, q))`` (linear interpolation) over all of a float array ``values``,
    in numpy's own steps and dtype: the two order statistics around ``(n - 1) * q / 100``,
    interpolated from the nearer one."""
    v = values.ravel()
    n = v.size
    if n == 0:
        return float(np.percentile(v, q))  # numpy's error
    virtual = (n - 1) * (q / 100.0)
    below = min(max(math.floor(virtual), 0), n - 1)
    above = min(below + 1, n - 1)
    p = v.copy()
    p.partition(sorted({0, n - 1, below, above}))
    if math.isnan(p[n - 1]):
        return math.nan
    if virtual >= n - 1:
        return float(p[n - 1])
    return float(_lerp(p[below], p[above], virtual - math.floor(virtual)))


def percentile_along(values: np.ndarray, q: float) -> np.ndarray:
    """``np.percentile(values, q, axis=0)`` (linear interpolation) for a float array ``values`` (N, ...),
    N > 0: per column, the same order statistics and numpy's own interpolation as :func:`percentile`,
    NaN where any is NaN."""
    n = values.shape[0]
    virtual = (n - 1) * (q / 100.0)
    below = min(max(math.floor(virtual), 0), n - 1)
    above = min(below + 1, n - 1)
    p = np.sort(values, axis=0)
    out = p[n - 1] if virtual >= n - 1 else _lerp(p[below], p[above], virtual - math.floor(virtual))
    nan = np.isnan(p[n - 1])
    return np.where(nan, np.nan, out) if nan.any() else out


def _lerp(a: np.ndarray, b: np.ndarray, gamma: float) -> np.ndarray:
    """numpy's linear interpolation between order statistics ``a`` and ``b``: from the nearer end, so
    that the ends are exact."""
    diff = b - a
    return b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma


def least_squares(a: np.ndarray, b: np.ndarray, rcond: float | None = None) -> np.ndarray:
    """``np.linalg.lstsq(a, b, rcond)[0]`` for float arrays ``a`` (M, N) and ``b`` (M,) or (M, K), or
    stacks of them (leading axes broadcast, one solve each): the same LAPACK kernel on the same values
    (in float64), so the same bits, without the wrapper's conversions and checks; float32 like numpy's
    when both are float32. ``rcond`` None is numpy's default (the machine epsilon times the larger side
    of ``a``). Unlike numpy it does not raise when the solve fails to converge (it cannot on the small,
    well-posed fits here): the solution is NaN."""
    if rcond is None:
        rcond = FLOAT_EPS * max(a.shape[-2:])
    if b.ndim == 1:
        x = _umath_linalg.lstsq(a, b[:, None], rcond, signature="ddd->ddid")[0][:, 0]
    else:
        x = _umath_linalg.lstsq(a, b, rcond, signature="ddd->ddid")[0]
    if a.shape[-2] == 0:
        x[...] = 0.0  # no points: numpy's answer
    return x.astype(np.float32) if a.dtype == b.dtype == np.float32 else x


def row_norms(x: np.ndarray) -> np.ndarray:
    """``np.linalg.norm(x, axis=1)`` for a real float array ``x`` (N, C): the same squares summed the
    same way along each row and their root, without the wrapper's checks."""
    return np.sqrt(np.add.reduce(x * x, axis=1))


def brightest_channel(colour: np.ndarray) -> np.ndarray:
    """``colour.max(axis=-1)`` for an array of three channels last (B, G, R): the same values, from two
    elementwise maxima. (numpy reduces a short last axis pixel by pixel: twenty times slower on a 640x480
    frame, 6.5 against 0.3 ms.)"""
    return np.maximum(np.maximum(colour[..., 0], colour[..., 1]), colour[..., 2])
