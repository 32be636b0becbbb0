"""What Foxglove and Lichtblick can read: JSON messages with flat JSON schemas, and foxglove's own types.

Those viewers decode MCAP channels whose message encoding is ``json`` and schema encoding
``jsonschema``; they do not decode msgpack, and they need schemas flatter than msgspec writes: the root
is ``"type": "object"`` (no root ``$ref``), an optional field has the plain type of its value (a value
that is None is left out of the message instead), literals are strings with an ``enum``, and array-like
structs (``Point``) are objects with named fields. :func:`schema_for` builds such a schema from a message
type and :func:`to_viewer` the matching JSON object from a message, both by walking
:func:`msgspec.inspect.type_info`, so the two cannot disagree.

The camera and vision's reading go out as ``foxglove.CompressedImage`` (JPEG) and
``foxglove.ImageAnnotations`` with the same timestamp, so the Image panel draws what vision saw on the
frame it saw it in; log lines as ``foxglove.Log``. docs/recording.md lists the channels.

This module knows messages and JSON, not files (:mod:`services.common.recording` writes them). OpenCV is
imported only to compress a camera frame.
"""

from __future__ import annotations

import base64
import enum
from collections.abc import Mapping
from typing import Any, Final

import msgspec
import msgspec.inspect as mi

import messages
from messages import BoardObservation, CameraFrame

#: the MCAP encodings of the viewers' channels.
JSON_ENCODING: Final = "json"
JSONSCHEMA_ENCODING: Final = "jsonschema"
#: the viewer topic of the camera, its annotations and the log.
CAMERA_TOPIC: Final = "/camera/image"
ANNOTATIONS_TOPIC: Final = "/vision/annotations"
LOG_TOPIC: Final = "/log"
#: the frame id (coordinate frame) the camera's images and annotations are in.
CAMERA_FRAME_ID: Final = "camera"
#: JPEG quality (OpenCV's 0-100) when none is configured.
DEFAULT_JPEG_QUALITY: Final = 80

NS: Final = 1_000_000_000


def viewer_topic(topic: str) -> str:
    """The viewers' name of a bus topic: ``vision.board`` -> ``/vision/board``."""
    return "/" + topic.replace(".", "/")


# --------------------------------------------------------------------------------------------------
# Schemas


def schema_for(cls: type[msgspec.Struct]) -> dict[str, Any]:
    """The flat JSON schema (draft 2020-12) of message type ``cls``: a root object, no ``$ref``."""
    schema = _schema(mi.type_info(cls))
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = f"sanzi.{cls.__name__}"
    return schema


def _schema(t: mi.Type) -> dict[str, Any]:
    match t:
        case mi.StructType():
            props: dict[str, Any] = {}
            required: list[str] = []
            if t.tag_field is not None:
                props[t.tag_field] = {"type": "string", "enum": [t.tag]}
                required.append(t.tag_field)
            for f in t.fields:
                props[f.encode_name] = _schema(f.type)
                if f.required and not _optional(f.type):
                    required.append(f.encode_name)
            return {"type": "object", "properties": props, "required": required}
        case mi.UnionType():
            kinds = [x for x in t.types if not isinstance(x, mi.NoneType)]
            if all(isinstance(x, mi.LiteralType) for x in kinds):
                values = [v for x in kinds for v in x.values]  # type: ignore[attr-defined]
                return _literal(values)
            if len(kinds) == 1:  # optional: the plain type; None is left out of the message
                return _schema(kinds[0])
            return {}  # a union of several types has no plain type: no constraint rather than a wrong one
        case mi.LiteralType():
            return _literal(list(t.values))
        case mi.EnumType():
            return _literal([m.value for m in t.cls])  # type: ignore[attr-defined]
        case mi.ListType() | mi.VarTupleType() | mi.SetType() | mi.FrozenSetType():
            return {"type": "array", "items": _schema(t.item_type)}
        case mi.TupleType():
            return {
                "type": "array",
                "prefixItems": [_schema(x) for x in t.item_types],
                "minItems": len(t.item_types),
                "maxItems": len(t.item_types),
            }
        case mi.DictType():
            return {"type": "object", "additionalProperties": _schema(t.value_type)}
        case mi.BoolType():
            return {"type": "boolean"}
        case mi.IntType():
            return {"type": "integer"}
        case mi.FloatType():
            return {"type": "number"}
        case mi.StrType():
            return {"type": "string"}
        case mi.BytesType() | mi.ByteArrayType() | mi.MemoryViewType():
            return {"type": "string", "contentEncoding": "base64"}
    return {}  # Any: no constraint


def _optional(t: mi.Type) -> bool:
    return isinstance(t, mi.UnionType) and any(isinstance(x, mi.NoneType) for x in t.types)


def _literal(values: list[Any]) -> dict[str, Any]:
    kinds = {type(v) for v in values}
    if kinds <= {str}:
        return {"type": "string", "enum": values}
    if kinds <= {int}:
        return {"type": "integer", "enum": values}
    return {"enum": values}


def to_viewer(message: msgspec.Struct) -> dict[str, Any]:
    """``message`` as the JSON object its :func:`schema_for` schema describes: structs (array-like ones
    too) as objects with their tag, None values left out, bytes as base64."""
    return _value(message)  # type: ignore[return-value]


def _value(value: Any) -> Any:
    if isinstance(value, msgspec.Struct):
        config = value.__struct_config__
        out: dict[str, Any] = {}
        if config.tag_field is not None:
            out[config.tag_field] = config.tag
        for name, encoded in zip(value.__struct_fields__, value.__struct_encode_fields__, strict=True):
            field = getattr(value, name)
            if field is not None:
                out[encoded] = _value(field)
        return out
    if isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list | tuple | set | frozenset):
        return [_value(v) for v in value]
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(value).decode()
    if isinstance(value, Mapping):
        return {str(k): _value(v) for k, v in value.items()}
    if isinstance(value, enum.Enum):
        return value.value
    return msgspec.to_builtins(value)


_json = msgspec.json.Encoder()


def encode(obj: Any) -> bytes:
    """JSON bytes of a viewer object."""
    return _json.encode(obj)


def _plain(t: mi.Type) -> bool:
    """Whether msgspec's own JSON of ``t`` is already the viewers' (no array-like struct, no None)."""
    match t:
        case mi.StructType():
            return not t.array_like and all(_plain(f.type) for f in t.fields)
        case mi.UnionType():
            return not any(isinstance(x, mi.NoneType) for x in t.types) and all(_plain(x) for x in t.types)
        case mi.ListType() | mi.VarTupleType() | mi.SetType() | mi.FrozenSetType():
            return _plain(t.item_type)
        case mi.TupleType():
            return all(_plain(x) for x in t.item_types)
        case mi.DictType():
            return _plain(t.key_type) and _plain(t.value_type)
    return True


_PLAIN: dict[type, bool] = {}


def viewer_json(message: msgspec.Struct) -> bytes:
    """The JSON bytes of :func:`to_viewer` of ``message``; types whose msgspec JSON is already the
    viewers' are encoded directly (the recorder's hot path: a heartbeat costs a third)."""
    cls = type(message)
    plain = _PLAIN.get(cls)
    if plain is None:
        plain = _PLAIN[cls] = _plain(mi.type_info(cls))
    return _json.encode(message) if plain else _json.encode(to_viewer(message))


# --------------------------------------------------------------------------------------------------
# foxglove's types, written for JSON (https://docs.foxglove.dev/docs/visualization/message-schemas)

_TIME: Final = {
    "type": "object",
    "properties": {"sec": {"type": "integer", "minimum": 0}, "nsec": {"type": "integer", "minimum": 0}},
    "required": ["sec", "nsec"],
}
_POINT2: Final = {
    "type": "object",
    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
    "required": ["x", "y"],
}
_COLOR: Final = {
    "type": "object",
    "properties": {c: {"type": "number", "minimum": 0, "maximum": 1} for c in "rgba"},
    "required": list("rgba"),
}


def _foxglove(title: str, props: dict[str, Any]) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "type": "object",
        "properties": props,
        "required": list(props),
    }


#: foxglove.CompressedImage: a JPEG (or PNG) image.
COMPRESSED_IMAGE_SCHEMA: Final = _foxglove(
    "foxglove.CompressedImage",
    {
        "timestamp": _TIME,
        "frame_id": {"type": "string"},
        "data": {"type": "string", "contentEncoding": "base64"},
        "format": {"type": "string"},
    },
)
_CIRCLE: Final = _foxglove(
    "foxglove.CircleAnnotation",
    {
        "timestamp": _TIME,
        "position": _POINT2,
        "diameter": {"type": "number"},
        "thickness": {"type": "number"},
        "fill_color": _COLOR,
        "outline_color": _COLOR,
    },
)
#: PointsAnnotation.type: 1 points, 2 line loop, 3 line strip, 4 line list.
POINTS, LINE_LOOP, LINE_STRIP, LINE_LIST = 1, 2, 3, 4
_POINTS: Final = _foxglove(
    "foxglove.PointsAnnotation",
    {
        "timestamp": _TIME,
        "type": {"type": "integer", "enum": [0, POINTS, LINE_LOOP, LINE_STRIP, LINE_LIST]},
        "points": {"type": "array", "items": _POINT2},
        "outline_color": _COLOR,
        "outline_colors": {"type": "array", "items": _COLOR},
        "fill_color": _COLOR,
        "thickness": {"type": "number"},
    },
)
_TEXT: Final = _foxglove(
    "foxglove.TextAnnotation",
    {
        "timestamp": _TIME,
        "position": _POINT2,
        "text": {"type": "string"},
        "font_size": {"type": "number"},
        "text_color": _COLOR,
        "background_color": _COLOR,
    },
)
#: foxglove.ImageAnnotations: circles, lines and texts drawn on an image of the same timestamp.
IMAGE_ANNOTATIONS_SCHEMA: Final = _foxglove(
    "foxglove.ImageAnnotations",
    {
        "circles": {"type": "array", "items": _CIRCLE},
        "points": {"type": "array", "items": _POINTS},
        "texts": {"type": "array", "items": _TEXT},
    },
)
#: foxglove.Log levels.
LOG_LEVELS: Final = {"debug": 1, "info": 2, "warning": 3, "warn": 3, "error": 4, "critical": 5, "fatal": 5}
#: foxglove.Log: one log line.
LOG_SCHEMA: Final = _foxglove(
    "foxglove.Log",
    {
        "timestamp": _TIME,
        "level": {"type": "integer", "enum": [0, 1, 2, 3, 4, 5]},
        "message": {"type": "string"},
        "name": {"type": "string"},
        "file": {"type": "string"},
        "line": {"type": "integer", "minimum": 0},
    },
)


def stamp(wall_ns: int) -> dict[str, int]:
    """A foxglove time from nanoseconds since the epoch."""
    wall_ns = max(0, wall_ns)
    return {"sec": wall_ns // NS, "nsec": wall_ns % NS}


def compressed_image(frame: CameraFrame, wall_ns: int, quality: int = DEFAULT_JPEG_QUALITY) -> dict[str, Any]:
    """``frame`` as a foxglove.CompressedImage stamped ``wall_ns``; a bgr8 frame is JPEG-compressed at
    ``quality``, a JPEG frame kept as it is.

    :raises ValueError: for a frame whose data does not match its size or encoding."""
    if frame.encoding == "jpeg":
        data = frame.data
    elif frame.encoding == "bgr8":
        import cv2  # only the recorder of a camera needs OpenCV
        import numpy as np

        if len(frame.data) != frame.width * frame.height * 3:
            raise ValueError(
                f"frame {frame.frame_id}: {len(frame.data)} bytes for {frame.width}x{frame.height}"
            )
        pixels = np.frombuffer(frame.data, np.uint8).reshape(frame.height, frame.width, 3)
        ok, jpeg = cv2.imencode(".jpg", pixels, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
        if not ok:
            raise ValueError(f"frame {frame.frame_id} could not be compressed")
        data = jpeg.tobytes()
    else:
        raise ValueError(f"frame {frame.frame_id}: unknown encoding {frame.encoding!r}")
    return {
        "timestamp": stamp(wall_ns),
        "frame_id": CAMERA_FRAME_ID,
        "data": base64.b64encode(data).decode(),
        "format": "jpeg",
    }


def _rgba(r: float, g: float, b: float, a: float = 1.0) -> dict[str, float]:
    return {"r": r, "g": g, "b": b, "a": a}


GRID_COLOUR: Final = _rgba(0.1, 0.9, 0.2)
UNSTABLE_COLOUR: Final = _rgba(1.0, 0.7, 0.0)
PIECE_COLOURS: Final = {"black": _rgba(0.0, 0.0, 0.0), "white": _rgba(1.0, 1.0, 1.0)}
TEXT_COLOUR: Final = _rgba(1.0, 1.0, 0.0)
TEXT_BACKGROUND: Final = _rgba(0.0, 0.0, 0.0, 0.6)
STATE_LETTER: Final = {"empty": ".", "black": "X", "white": "O", "unknown": "?"}


def _lerp(a: messages.Point, b: messages.Point, t: float) -> dict[str, float]:
    return {"x": a.x + (b.x - a.x) * t, "y": a.y + (b.y - a.y) * t}


def image_annotations(obs: BoardObservation, wall_ns: int) -> dict[str, Any]:
    """Vision's reading drawn on the frame it read: the grid (green when stable, orange otherwise), each
    square's number, state and confidence, and a circle on every piece seen (squares and supplies).
    Stamped ``wall_ns``, the same time as the frame's image, which is how the viewer pairs them."""
    ts = stamp(wall_ns)
    points: list[dict[str, Any]] = []
    texts: list[dict[str, Any]] = []
    circles: list[dict[str, Any]] = []
    colour = GRID_COLOUR if obs.stable else UNSTABLE_COLOUR
    if obs.pose is not None:
        tl, tr, br, bl = obs.pose.corners_px
        segments: list[dict[str, float]] = []
        for i in range(4):  # the four lines of each direction, borders included
            t = i / 3
            segments += [_lerp(tl, bl, t), _lerp(tr, br, t), _lerp(tl, tr, t), _lerp(bl, br, t)]
        points.append(
            {
                "timestamp": ts,
                "type": LINE_LIST,
                "points": segments,
                "outline_color": colour,
                "outline_colors": [],
                "fill_color": _rgba(0, 0, 0, 0),
                "thickness": 2.0,
            }
        )
    pitch = _pitch(obs)
    for square in obs.squares:
        if square.center_px is None:
            continue
        centre = {"x": square.center_px.x, "y": square.center_px.y}
        letter = STATE_LETTER.get(square.state, "?")
        texts.append(
            {
                "timestamp": ts,
                "position": centre,
                "text": f"{square.number}{letter} {square.confidence:.2f}",
                "font_size": 12.0,
                "text_color": TEXT_COLOUR,
                "background_color": TEXT_BACKGROUND,
            }
        )
        if square.state in PIECE_COLOURS:
            circles.append(_circle(ts, centre, pitch * 0.7, square.state))
    for piece in obs.supply:
        diameter = 2 * piece.radius_px if piece.radius_px > 0 else pitch * 0.7
        circles.append(_circle(ts, {"x": piece.center_px.x, "y": piece.center_px.y}, diameter, piece.colour))
    if obs.problem:
        texts.append(
            {
                "timestamp": ts,
                "position": {"x": 8.0, "y": 20.0},
                "text": f"{obs.board} {obs.problem}",
                "font_size": 14.0,
                "text_color": UNSTABLE_COLOUR,
                "background_color": TEXT_BACKGROUND,
            }
        )
    return {"circles": circles, "points": points, "texts": texts}


def _circle(ts: dict[str, int], centre: dict[str, float], diameter: float, colour: str) -> dict[str, Any]:
    return {
        "timestamp": ts,
        "position": centre,
        "diameter": diameter,
        "thickness": 2.0,
        "fill_color": _rgba(0, 0, 0, 0),
        "outline_color": _rgba(1.0, 0.2, 0.2) if colour == "black" else _rgba(0.2, 0.4, 1.0),
    }


def _pitch(obs: BoardObservation) -> float:
    """The square pitch in pixels (a guess of 40 when there is no pose)."""
    if obs.pose is None:
        return 40.0
    tl, tr = obs.pose.corners_px[0], obs.pose.corners_px[1]
    return max(1.0, ((tr.x - tl.x) ** 2 + (tr.y - tl.y) ** 2) ** 0.5 / 3)


def log_entry(line: Mapping[str, Any], wall_ns: int, process: str) -> dict[str, Any]:
    """A structlog JSON line (``event``, ``level``, more keys) as a foxglove.Log: the message is the event
    followed by its other keys as key=value; the name is the process."""
    level = LOG_LEVELS.get(str(line.get("level", "")).lower(), 0)
    skip = {"event", "level", "timestamp", "process", "pid", "logger"}
    rest = " ".join(f"{k}={v}" for k, v in line.items() if k not in skip)
    text = str(line.get("event", ""))
    return {
        "timestamp": stamp(wall_ns),
        "level": level,
        "message": f"{text} {rest}".strip(),
        "name": str(line.get("process") or process),
        "file": "",
        "line": 0,
    }
