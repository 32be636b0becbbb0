"""The image prepared once for every step: checked, grey, blurred, reduced to half size when large,
its colour kept; its noise and grey-level spread measured (from histograms, to the bit as numpy's
median and percentile give them)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Final

import cv2
import numpy as np

from .model import DetectorError
from .stats import brightest_channel

#: images smaller than this (pixels on the shorter side) cannot hold a readable grid.
MIN_IMAGE_SIDE: Final = 48
#: the grid is searched for at half resolution first when the image's shorter side is at least this.
HALF_RES_MIN_SIDE: Final = 360
#: the relief (:func:`relief`): the disc whose opening and closing leave the thin structures (px), and
#: how many times they are amplified. (On our renderer's engraved grooves 2-4.5% of the pitch, 60
#: frames, before the search checked the grid on the image's own lines: at 5 px and 4 times, 4 boards
#: not found, against 8 without the relief; at 2 times, 6; at 8, 5; at 3 px, 7. With that check, 5.)
RELIEF_KERNEL_PX: Final = 5
RELIEF_GAIN: Final = 4.0
#: float32 counts are exact integers below this many pixels.
GREY_COUNTS_EXACT: Final = 2**24


def noise_sigma(gray: np.ndarray) -> float:
    """Robust estimate of the sensor noise (grey levels) from horizontal pixel differences.

    Edges are a minority of pixels, so the median of absolute differences measures the noise.
    """
    sub = gray[::8, :]
    # |a - b| of 8-bit pixels is exact in 8 bits; its median from a histogram (exact for integers,
    # several times faster than sorting).
    d = cv2.absdiff(sub[:, 1:], sub[:, :-1])
    return _median_of_counts(_grey_counts(d), d.size) * 1.4826 / math.sqrt(2.0)


def _grey_counts(pixels: np.ndarray) -> np.ndarray:
    """How many of the 8-bit ``pixels`` take each grey level (256,), as ``np.bincount`` counts them: from
    OpenCV's histogram (exact: float32 counts are integers up to 2**24 pixels), several times faster
    than numpy's bincount, which first widens every pixel to a 64-bit index."""
    if pixels.size >= GREY_COUNTS_EXACT:
        return np.bincount(pixels.ravel(), minlength=256)
    hist = cv2.calcHist([np.ascontiguousarray(pixels)], [0], None, [256], [0, 256])
    return hist.ravel().astype(np.int64)


def _order_stat(cum: np.ndarray, k: int) -> int:
    """The ``k``-th smallest value (0-based) of integers whose histogram's running sum is ``cum``."""
    return int(np.searchsorted(cum, k, side="right"))


def _median_of_counts(counts: np.ndarray, n: int) -> float:
    """The median of ``n`` integers given as a histogram ``counts`` (``counts[v]`` values equal to v),
    exactly as ``np.median`` gives it: the mean of the two middle values when ``n`` is even."""
    cum = np.cumsum(counts)
    return (_order_stat(cum, (n - 1) // 2) + _order_stat(cum, n // 2)) / 2.0


def _percentile_of_counts(cum: np.ndarray, n: int, q: float) -> float:
    """``np.percentile(values, q)`` (linear interpolation) of ``n`` integers whose histogram's running sum
    is ``cum``, computed in the same float64 steps as numpy's so that the result is the same to the bit."""
    virtual = (n - 1) * (q / 100.0)
    below = math.floor(virtual)
    if virtual >= n - 1:
        return float(_order_stat(cum, n - 1))
    a, b = _order_stat(cum, below), _order_stat(cum, below + 1)
    gamma = virtual - below
    diff = float(b - a)
    # numpy's lerp: from the nearer end, so that the ends are exact.
    return b - diff * (1.0 - gamma) if gamma >= 0.5 else a + diff * gamma


def _prepare(image: np.ndarray) -> np.ndarray:
    if not isinstance(image, np.ndarray) or image.size == 0:
        raise DetectorError("expected a non-empty numpy image")
    if image.ndim == 3 and image.shape[2] == 3:
        gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    elif image.ndim == 3 and image.shape[2] == 4:
        gray = cv2.cvtColor(image, cv2.COLOR_BGRA2GRAY)
    elif image.ndim == 2:
        gray = image
    else:
        raise DetectorError(f"expected a grey or BGR image, got shape {image.shape}")
    if gray.dtype != np.uint8:
        raise DetectorError(f"expected 8-bit pixels, got {gray.dtype}")
    if min(gray.shape) < MIN_IMAGE_SIDE:
        raise DetectorError(f"image too small: {gray.shape[1]}x{gray.shape[0]}")
    return gray


def _spread(gray: np.ndarray) -> float:
    """The grey range of the image's middle 90 % (5th to 95th percentile of every 8th pixel), at least
    1."""
    sub = gray[::8, ::8]
    cum = np.cumsum(_grey_counts(sub))
    lo, hi = (_percentile_of_counts(cum, sub.size, q) for q in (5.0, 95.0))
    return float(max(hi - lo, 1.0))


@dataclass
class _Image:
    """The image prepared once: blurred grey at full and reduced size, noise and spread."""

    gray: np.ndarray  # blurred, full size
    bgr: np.ndarray | None  # the original colour image (None for a grey input)
    small: np.ndarray  # blurred, reduced by ``scale``
    scale: float
    sigma: float  # noise left after the blur, grey levels
    spread: float
    sigma_raw: float  # noise of the original image


def _prepare_image(image: np.ndarray) -> _Image:
    raw = _prepare(image)
    sigma_raw = noise_sigma(raw)
    gray = cv2.GaussianBlur(raw, (5, 5), 1.0)
    if min(gray.shape) >= HALF_RES_MIN_SIDE:
        small = cv2.resize(gray, (gray.shape[1] // 2, gray.shape[0] // 2), interpolation=cv2.INTER_AREA)
        scale = 0.5
    else:
        small, scale = gray, 1.0
    bgr = image if image.ndim == 3 and image.shape[2] == 3 else None
    # A 5x5, sigma 1 Gaussian divides white noise by about 3.5; half a level for quantisation.
    return _Image(gray, bgr, small, scale, sigma_raw / 3.5 + 0.5, _spread(gray), sigma_raw)


def relief(gray: np.ndarray) -> np.ndarray:
    """The thin structures of ``gray`` (8-bit), light and dark alike, as light on black: what a
    ``RELIEF_KERNEL_PX`` disc's opening takes off the light ones plus what its closing fills in the
    dark ones (white top-hat plus black top-hat), ``RELIEF_GAIN`` times."""
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (RELIEF_KERNEL_PX, RELIEF_KERNEL_PX))
    light = cv2.morphologyEx(gray, cv2.MORPH_TOPHAT, kernel)
    dark = cv2.morphologyEx(gray, cv2.MORPH_BLACKHAT, kernel)
    both = cv2.add(light, dark)  # (saturating)
    return cv2.convertScaleAbs(both, alpha=RELIEF_GAIN)


def _brightest(im: _Image, keep_colour: bool) -> _Image:
    """``im`` seen in each pixel's brightest channel instead of grey, with its colour or without."""
    assert im.bgr is not None
    brightest = _prepare_image(brightest_channel(im.bgr))
    return replace(brightest, bgr=im.bgr) if keep_colour else brightest
