"""Every message of the sanzi bus: frozen, tagged msgspec Structs, one envelope, one topic table.

This package holds messages and nothing else (no sockets, no logging). Squares are numbered 1..9 on the
bus; boards are 9-character strings ("X" black, "O" white, "." empty, "?" unknown), row by row.
"""

from .actuator import ActuatorCommand, ActuatorEvent, ActuatorPosition
from .ai import MoveReply, MoveRequest
from .base import Colour, Message, Point, SquareState
from .camera import CameraControl, CameraFrame
from .envelope import (
    DecodeError,
    Envelope,
    Header,
    decode,
    decode_body,
    decode_header,
    encode,
    json_schema,
    make_header,
    to_builtins,
    type_tag,
)
from .game import Activity, Illegal, Phase, Result
from .operator import OperatorCommand, OperatorReply
from .panel import ButtonPress, PanelState
from .referee import GameState, PlacementRecord
from .sim import (
    ButtonLevel,
    FaultInjection,
    GripperState,
    HandState,
    HumanSetup,
    PieceState,
    WorldAction,
    WorldState,
)
from .system import Heartbeat
from .topics import MESSAGE_TYPES, TOPICS, Channel, Topic, topic_info, topics_matching
from .vision import BoardObservation, BoardPose, SquareObservation, SupplyPiece

__all__ = [
    "MESSAGE_TYPES",
    "TOPICS",
    "Activity",
    "ActuatorCommand",
    "ActuatorEvent",
    "ActuatorPosition",
    "BoardObservation",
    "BoardPose",
    "ButtonLevel",
    "ButtonPress",
    "CameraControl",
    "CameraFrame",
    "Channel",
    "Colour",
    "DecodeError",
    "Envelope",
    "FaultInjection",
    "GameState",
    "GripperState",
    "HandState",
    "Header",
    "Heartbeat",
    "HumanSetup",
    "Illegal",
    "Message",
    "MoveReply",
    "MoveRequest",
    "OperatorCommand",
    "OperatorReply",
    "PanelState",
    "Phase",
    "PieceState",
    "PlacementRecord",
    "Point",
    "Result",
    "SquareObservation",
    "SquareState",
    "SupplyPiece",
    "Topic",
    "WorldAction",
    "WorldState",
    "decode",
    "decode_body",
    "decode_header",
    "encode",
    "json_schema",
    "make_header",
    "to_builtins",
    "topic_info",
    "topics_matching",
    "type_tag",
]
