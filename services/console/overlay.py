"""A camera frame with vision's overlay, as a JPEG for the browser. The drawing is vision's own
(:func:`services.vision.annotate.annotate`, fed the bus message through
:meth:`services.vision.detector.model.Detection.from_observation`), so the console shows what
``sanzi detect --annotate`` and vision's anomaly frames show."""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np

from services.vision.annotate import annotate
from services.vision.detector import Detection
from services.vision.sources import SourceError, decode_camera_frame

from .core import Pair

#: drawn over a frame vision has not read (vision down or too slow).
NO_READING: Final = "vision: no reading"
BANNER_COLOUR: Final = (0, 0, 255)


def render(pair: Pair) -> np.ndarray:
    """The frame of ``pair`` with vision's reading drawn on it (a banner when there is none).
    :raises SourceError: when the frame's data cannot be decoded."""
    image = decode_camera_frame(pair.frame)
    if pair.obs is not None:
        return annotate(image, Detection.from_observation(pair.obs))
    out = image.copy()
    cv2.putText(out, NO_READING, (8, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.5, BANNER_COLOUR, 1, cv2.LINE_AA)
    return out


def to_jpeg(pair: Pair, quality: int) -> bytes:
    """:func:`render` encoded as JPEG. :raises SourceError:"""
    ok, data = cv2.imencode(".jpg", render(pair), [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise SourceError(f"frame {pair.frame.frame_id} could not be encoded as JPEG")
    return data.tobytes()
