"""The hidden manifest of one investigation task: what was planted, where, and how to check it.

It travels in the task's gold answer (`answer["manifest"]`), which no tool can read, and it is
the only record of the plant: the planted database holds the effect, never the description.
`affected` identifies the touched rows without listing them: their count, the sum of their row
hashes (order-independent, like the snapshot checksums) and the salted hash rule that chose them,
so the plant can be re-created and checked from the snapshot.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel, Field

from workgym.envs.warehouse.investigate.frame import Frame, Metric
from workgym.envs.warehouse.investigate.slices import Explained
from workgym.envs.warehouse.runtime.conclusion_answer import Direction, PredicateTerm

MANIFEST_VERSION = 1


class Affected(BaseModel):
    rows: int
    checksum: str  # sum of hash(row) over the touched original rows
    salt: int
    fraction: float


class Jitter(BaseModel):
    """Every task database drops a different sliver of fact rows, chosen by a salted hash, so no
    fingerprint (row count, checksum) tells a planted copy from an unplanted one."""

    salt: int
    rate: float


class GateRecord(BaseModel):
    admitted: bool
    reason: str
    change: float | None = None
    planted: Explained | None = None
    top: list[Explained] = Field(default_factory=list)
    attempts: int = 1


class Manifest(BaseModel):
    version: int = MANIFEST_VERSION
    plant_id: str
    database: str  # relative to the environment directory
    digest: str = ""  # the copy's table checksums (plant.digest_of): a changed file shows
    frame: Frame
    metric: Metric
    baseline: tuple[dt.datetime, dt.datetime]
    window: tuple[dt.datetime, dt.datetime]
    cause_type: str
    predicate: list[PredicateTerm] = Field(default_factory=list)
    planted_window: tuple[dt.datetime, dt.datetime] | None = None
    direction: Direction = "none"
    magnitude: float | None = None
    planted_columns: list[str] = Field(default_factory=list)
    detail: dict[str, Any] = Field(default_factory=dict)
    affected: Affected | None = None
    jitter: Jitter
    values: dict[str, float | None] = Field(default_factory=dict)
    gate: GateRecord

    @property
    def planted(self) -> bool:
        return self.affected is not None
