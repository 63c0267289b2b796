"""Task families F1-F8 and F10 (F9, investigations, lives in `warehouse.investigate`).

Each family is a function `drafts(ctx) -> Iterator[Draft]` that proposes candidate tasks from the
schema card; `validate.check` decides which become tasks. The registry order is the order the
generator visits them in.
"""

from __future__ import annotations

from workgym.envs.warehouse.generate.families import (
    antijoin,
    counting,
    joins,
    location,
    quality,
    ranking,
    ratios,
    trends,
    unanswerable,
)
from workgym.envs.warehouse.generate.families.draft import Context, Draft, Family

FAMILIES: dict[str, Family] = {
    "F1": counting.drafts,
    "F2": ranking.drafts,
    "F3": joins.drafts,
    "F4": trends.drafts,
    "F5": ratios.drafts,
    "F6": antijoin.drafts,
    "F7": quality.drafts,
    "F8": location.drafts,
    "F10": unanswerable.drafts,
}
NAMES: dict[str, str] = {
    "F1": "filter/count",
    "F2": "group + top-k",
    "F3": "join path / bridge",
    "F4": "trend between periods",
    "F5": "ratio",
    "F6": "anti-join",
    "F7": "data quality",
    "F8": "schema location",
    "F9": "investigation",
    "F10": "unanswerable",
}

__all__ = ["FAMILIES", "NAMES", "Context", "Draft", "Family"]
