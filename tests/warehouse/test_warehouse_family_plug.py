"""F9 reaches `generate` and `WarehouseEnv` through the registry (`runtime/family_plug.py`).

These need the entry point `F9` in the group `workgym.warehouse_families` of the installed
metadata (`pip install -e .` after pulling a pyproject.toml that declares it).
"""

from __future__ import annotations

import pytest

from workgym.core.registry import Registry
from workgym.envs.warehouse.investigate.family import F9, InvestigationFamily
from workgym.envs.warehouse.runtime import family_plug
from workgym.envs.warehouse.runtime.family_plug import (
    FAMILIES,
    GROUP,
    WarehouseFamily,
    family,
    family_of_kind,
)


def test_f9_is_declared_as_an_entry_point_of_workgym() -> None:
    entry = FAMILIES.get("F9")
    assert entry is not None, FAMILIES.stale_install()
    assert entry.distribution == "workgym"
    assert entry.source == "workgym.envs.warehouse.investigate.family:F9"
    assert family("F9") is F9


def test_the_conclusion_answer_kind_belongs_to_f9() -> None:
    found = family_of_kind("conclusion")
    assert isinstance(found, InvestigationFamily)
    assert found.answer_kind == "conclusion"
    assert found.cause_vocabulary()["duplication"]  # the surface answers through the plug


def test_an_unknown_family_is_none_and_an_unowned_kind_a_one_line_error() -> None:
    assert family("F99") is None
    with pytest.raises(ValueError, match=f"no warehouse task family scores 'tally'.*{GROUP}") as e:
        family_of_kind("tally")
    assert "\n" not in str(e.value)


class _Tally:
    """A family from another package: only its answer kind matters to the lookup."""

    answer_kind = "tally"


@pytest.fixture
def tally(monkeypatch: pytest.MonkeyPatch) -> WarehouseFamily:
    """The registry with one more family, added in this process (as `@wg.register` would)."""
    registry: Registry[WarehouseFamily] = Registry("warehouse task family", GROUP)
    plug: WarehouseFamily = _Tally()  # type: ignore[assignment]
    registry.add("tally", plug)
    monkeypatch.setattr(family_plug, "FAMILIES", registry)
    return plug


def test_a_family_registered_elsewhere_owns_its_kind(tally: WarehouseFamily) -> None:
    assert family("tally") is tally
    assert family_of_kind("tally") is tally
    assert isinstance(family_of_kind("conclusion"), InvestigationFamily)
