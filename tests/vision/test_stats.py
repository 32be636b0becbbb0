"""The detector's order statistics (:mod:`services.vision.detector.stats`) are numpy's own, to the bit:
``np.median`` and ``np.percentile`` without their wrappers' overhead, on the dtypes the detector reads
(float32 and float64 with ties and NaN, uint8 and int64), whole arrays and along an axis. And
``np.linalg.lstsq``'s solution without its wrapper, on the fits the detector makes (straight lines
through a few points, one or several at once; a plane through nine)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from services.vision.detector.stats import (
    least_squares,
    median,
    median_along,
    percentile,
    percentile_along,
    row_norms,
)

DTYPES = (np.float32, np.float64, np.uint8, np.int64)


def _sample(rng: np.random.Generator, n: int, dtype: type, trial: int) -> np.ndarray:
    if dtype in (np.uint8, np.int64):
        return rng.integers(0, 255, n).astype(dtype)
    x = (rng.normal(0, 50, n) if trial % 3 else np.round(rng.normal(0, 5, n))).astype(dtype)  # ties
    if trial % 17 == 0:
        x[rng.integers(n)] = np.nan
    return x


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("dtype", DTYPES)
def test_median_is_numpys(dtype: type) -> None:
    rng = np.random.default_rng(1)
    for trial in range(200):
        x = _sample(rng, int(rng.integers(1, 400)), dtype, trial)
        assert _same(median(x), float(np.median(x))), (trial, x)


@pytest.mark.parametrize("dtype", (np.float32, np.float64))
def test_percentile_is_numpys(dtype: type) -> None:
    rng = np.random.default_rng(2)
    for trial in range(150):
        x = _sample(rng, int(rng.integers(1, 400)), dtype, trial)
        for q in (5.0, 12.5, 50.0, 80.0, 90.0, 95.0, 100.0):
            with np.errstate(all="ignore"):
                expected = float(np.percentile(x, q))
            assert _same(percentile(x, q), expected), (trial, q)


@pytest.mark.parametrize("dtype", (np.float32, np.float64))
def test_percentile_along_the_first_axis_is_numpys(dtype: type) -> None:
    rng = np.random.default_rng(4)
    for trial in range(200):
        shape = (int(rng.integers(1, 40)), int(rng.integers(1, 8)))
        y = (rng.normal(0, 50, shape) if trial % 3 else np.round(rng.normal(0, 3, shape))).astype(dtype)
        if trial % 20 == 0:
            y[0, 0] = np.nan
        for q in (0.0, 10.0, 33.3, 50.0, 75.0, 90.0, 100.0):
            with np.errstate(all="ignore"):
                expected = np.percentile(y, q, axis=0)
            got = percentile_along(y, q)
            assert got.dtype == expected.dtype and got.shape == expected.shape
            assert np.array_equal(got, expected, equal_nan=True), (trial, q)


@pytest.mark.parametrize("dtype", (np.float32, np.float64))
def test_median_along_an_axis_is_numpys(dtype: type) -> None:
    rng = np.random.default_rng(3)
    for trial in range(100):
        shape = (int(rng.integers(1, 10)), int(rng.integers(1, 30)), int(rng.integers(1, 4)))
        y = (rng.normal(0, 50, shape) if trial % 2 else np.round(rng.normal(0, 3, shape))).astype(dtype)
        if trial % 20 == 0:
            y[0, 0, 0] = np.nan
        for axis in range(3):
            got, expected = median_along(y, axis), np.median(y, axis=axis)
            assert got.dtype == expected.dtype and got.shape == expected.shape
            assert np.array_equal(got, expected, equal_nan=True), (trial, axis)


def test_least_squares_is_numpys() -> None:
    rng = np.random.default_rng(4)
    for trial in range(200):
        m, n = int(rng.integers(2, 12)), int(rng.integers(1, 4))
        a = rng.normal(0, 10, (m, n)).astype(np.float32 if trial % 5 < 2 else np.float64)
        b = rng.normal(0, 10, m) if trial % 2 else rng.normal(0, 10, (m, int(rng.integers(1, 4))))
        b = b.astype(np.float32 if trial % 5 in (1, 2) else np.float64)
        rcond = None if trial % 3 else float(m) * float(np.finfo(np.float64).eps)
        mine, numpys = least_squares(a, b, rcond), np.linalg.lstsq(a, b, rcond)[0]
        assert mine.dtype == numpys.dtype and mine.tobytes() == numpys.tobytes(), trial
    # A stack of right-hand sides against one design: each solution is that of its own call.
    a = rng.normal(0, 10, (6, 2))
    bs = rng.normal(0, 10, (8, 6, 1))
    stacked = least_squares(a, bs)
    for b, x in zip(bs, stacked, strict=True):
        assert x.tobytes() == np.linalg.lstsq(a, b)[0].tobytes()
    # No points at all: zeros, as numpy gives.
    assert (
        least_squares(np.zeros((0, 3)), np.zeros(0)).tobytes()
        == np.linalg.lstsq(np.zeros((0, 3)), np.zeros(0))[0].tobytes()
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_norms_are_numpys(dtype: type) -> None:
    rng = np.random.default_rng(5)
    for _trial in range(200):
        x = rng.normal(0, 50, (int(rng.integers(1, 12)), int(rng.integers(1, 4)))).astype(dtype)
        mine, numpys = row_norms(x), np.linalg.norm(x, axis=1)
        assert mine.dtype == numpys.dtype and mine.tobytes() == numpys.tobytes()
