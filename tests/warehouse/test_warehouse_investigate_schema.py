"""Conclusion schema, vocabulary, predicates, evidence matching and the gate's ranking rule."""

from __future__ import annotations

import datetime as dt

import pytest

from workgym.envs.warehouse.investigate.conclusion import names_several, parse_time
from workgym.envs.warehouse.investigate.evidence import normalise_sql, reproduces
from workgym.envs.warehouse.investigate.frame import Frame, Join
from workgym.envs.warehouse.investigate.slices import (
    Cell,
    PredicateError,
    SliceTable,
    Term,
    predicate_sql,
)
from workgym.envs.warehouse.investigate.solvability import admit_null, admit_planted
from workgym.envs.warehouse.investigate.vocab import ALIASES, NORMAL, PLANTED, canonical
from workgym.envs.warehouse.runtime.conclusion_answer import ConclusionAnswer, parse_conclusion
from workgym.envs.warehouse.runtime.tools import submit_answer

FRAME = Frame(
    fact="flights",
    time_column="time_hour",
    time_is_timestamp=True,
    dims=["carrier", "origin"],
    measures=["dep_delay"],
    columns=["carrier", "origin", "dep_delay", "time_hour"],
    joins=[Join(fact_column="carrier", dim="airlines", dim_column="carrier", columns=["name"])],
)


def test_vocabulary_is_closed_with_declared_aliases() -> None:
    assert len(PLANTED) == 8 and NORMAL not in PLANTED
    for cause, aliases in ALIASES.items():
        assert canonical(cause) == cause
        for alias in aliases:
            assert canonical(alias) == cause
            assert canonical(alias.upper().replace(" ", "-")) == cause  # case, separators
    assert canonical("Duplicate Rows") == "duplication"
    assert canonical("duplicates?") is None  # no punctuation stripping
    assert canonical("volume") is None  # no substrings
    assert canonical(["duplication"]) is None


def test_several_types_in_one_term_are_recognised_as_enumeration() -> None:
    assert names_several("duplication, volume_drop")
    assert names_several("segment_shock or data bug")
    assert not names_several("duplication")
    assert not names_several("weather or luck")


def test_flat_conclusion_parses_with_evidence_as_text_or_with_a_value() -> None:
    got = parse_conclusion(
        {
            "kind": "conclusion",
            "cause_type": "duplication",
            "predicate": [{"column": "carrier", "op": "=", "value": "UA"}],
            "window": ["2013-03-04", "2013-03-11"],
            "direction": "up",
            "magnitude": 0.1,
            "evidence": ["SELECT 1", {"sql": "SELECT 2", "value": 2}],
        }
    )
    assert [q.sql for q in got.queries()] == ["SELECT 1", "SELECT 2"]
    assert got.queries()[1].value == 2.0
    assert "manifest" not in got.submission()


@pytest.mark.parametrize(
    "bad",
    [
        {"kind": "conclusion", "cause_type": "x", "magnitude": "0.1"},  # "0.1" is not a number
        {"kind": "conclusion", "cause_type": "x", "surprise": 1},  # unknown field
        {"kind": "conclusion", "cause_type": ["a", "b"]},  # one type, not a list
        {"kind": "conclusion", "cause_type": "x", "direction": "sideways"},
        {"kind": "conclusion", "cause_type": "x", "window": ["a", "b", "c"]},
    ],
)
def test_malformed_conclusions_are_rejected(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="not a valid conclusion"):
        parse_conclusion(bad)


def test_the_hidden_manifest_is_not_part_of_the_tool_schema() -> None:
    schema = str(submit_answer.spec.parameters)
    assert "cause_type" in schema and "manifest" not in schema
    gold = ConclusionAnswer.model_validate(
        {"kind": "conclusion", "cause_type": NORMAL, "manifest": {"secret": 1}}
    )
    assert gold.submission() == {
        "kind": "conclusion",
        "cause_type": NORMAL,
        "predicate": [],
        "window": [],
        "direction": "none",
        "magnitude": None,
        "evidence": [],
        "prose": "",
    }


def test_predicates_become_quoted_sql_and_reject_unknown_columns() -> None:
    sql = predicate_sql([Term(column="origin", value="O'Hare'); DROP TABLE flights; --")], FRAME)
    assert sql == """(f."origin" = 'O''Hare''); DROP TABLE flights; --')"""
    assert predicate_sql([], FRAME) == "TRUE"
    assert "IN ('UA', 'AA')" in predicate_sql(
        [Term(column="flights.carrier", op="in", value=["UA", "AA"])], FRAME
    )
    assert predicate_sql([Term(column="dep_delay", op="is null")], FRAME).endswith("IS NULL)")
    dim = predicate_sql([Term(column="airlines.name", value="United Air Lines Inc.")], FRAME)
    assert dim == (
        """(f."carrier" IN (SELECT "carrier" FROM "airlines" """
        """WHERE "name" = 'United Air Lines Inc.'))"""
    )
    for bad in (
        Term(column="nope", value=1),
        Term(column="planes.seats", value=1),
        Term(column="airlines.nope", value=1),
        Term(column="carrier", op="=", value=["UA"]),
        Term(column="carrier", op="<", value=None),
        Term(column="carrier", op="in", value=[]),
    ):
        with pytest.raises(PredicateError):
            predicate_sql([bad], FRAME)


def test_evidence_numbers_reproduce_at_the_precision_they_were_written() -> None:
    rows = [("window", 12.3456, 7), ("baseline", True, None)]
    assert reproduces(12.35, rows) and reproduces(12.3456, rows) and reproduces(7, rows)
    assert not reproduces(12.4, rows)
    assert not reproduces(1.0, rows)  # True is not a number
    assert not reproduces(12.34, rows)  # 12.3456 rounds to 12.35


def test_sql_normalisation_ignores_layout_but_not_content() -> None:
    assert normalise_sql("select  1 as x\n from t ;") == normalise_sql("SELECT 1 AS x FROM t")
    assert normalise_sql("SELECT 1 FROM t") != normalise_sql("SELECT 2 FROM t")


def test_window_times_parse_as_utc() -> None:
    assert parse_time("2013-03-04") == dt.datetime(2013, 3, 4)
    assert parse_time("2013-03-04T05:00:00Z") == dt.datetime(2013, 3, 4, 5)
    assert parse_time("2013-03-04T00:00:00-05:00") == dt.datetime(2013, 3, 4, 5)
    assert parse_time("last week") is None


def _table(cells: dict[tuple[tuple[str, str], ...], tuple[int, float, int, float]]) -> SliceTable:
    """Cells as (rows_b, sum_b, rows_w, sum_w) of an average metric; the total is their sum."""
    out = {}
    total = Cell()
    for key, (nb, sb, nw, sw) in cells.items():
        out[key] = Cell(rows_b=nb, num_b=sb, den_b=nb, rows_w=nw, num_w=sw, den_w=nw)
        if len(key) == 1 and key[0][0] == "carrier":
            for f in ("rows_b", "num_b", "den_b", "rows_w", "num_w", "den_w"):
                setattr(total, f, getattr(total, f) + getattr(out[key], f))
    return SliceTable(ratio=True, total=total, cells=out)


def _airline_week(ewr_natural: float) -> SliceTable:
    """Delays of two carriers at two airports; UA@EWR gets +20 min, EWR shifts naturally."""
    base = 10.0
    ua_ewr, ua_jfk, aa_ewr, aa_jfk = 200, 200, 200, 400
    shock = 20.0
    w = {
        "ua_ewr": base + ewr_natural + shock,
        "ua_jfk": base,
        "aa_ewr": base + ewr_natural,
        "aa_jfk": base,
    }
    sizes = {("UA", "EWR"): ua_ewr, ("UA", "JFK"): ua_jfk, ("AA", "EWR"): aa_ewr,
             ("AA", "JFK"): aa_jfk}  # fmt: skip
    cells = {
        (("carrier", c), ("origin", o)): (n, base * n, n, w[f"{c}_{o}".lower()] * n)
        for (c, o), n in sizes.items()
    }
    out = dict(cells)
    for col in ("carrier", "origin"):
        groups: dict[str, list[tuple[int, float, int, float]]] = {}
        for key, val in cells.items():
            groups.setdefault(dict(key)[col], []).append(val)
        for value, vals in groups.items():
            out[((col, value),)] = tuple(sum(v[i] for v in vals) for i in range(4))  # type: ignore[assignment]
    return _table(out)


def test_gate_admits_a_plant_that_stands_out_and_rejects_the_ewr_trap() -> None:
    quiet = admit_planted(_airline_week(0.0), (("carrier", "UA"), ("origin", "EWR")))
    assert quiet.admitted and quiet.planted is not None and quiet.planted.explained > 0.99
    # EWR already moved by 15 minutes that week: origin=EWR now outranks the planted slice.
    trap = admit_planted(_airline_week(15.0), (("carrier", "UA"), ("origin", "EWR")))
    assert not trap.admitted
    assert trap.reason.endswith("is outranked by origin=EWR")
    assert trap.top[0].key == (("origin", "EWR"),)
    # A smaller natural shift leaves the plant first, explaining most of the change: admitted.
    mild = admit_planted(_airline_week(5.0), (("carrier", "UA"), ("origin", "EWR")))
    assert mild.admitted and mild.planted is not None and 0.5 <= mild.planted.explained < 0.9


def test_null_gate_rejects_a_week_where_one_slice_explains_the_change() -> None:
    assert not admit_null(_airline_week(0.0)).admitted  # UA@EWR alone moved: not "normal"
    broad = _airline_week(0.0)
    for cell in broad.cells.values():  # every slice moves alike: no single explanation
        cell.num_w = cell.num_b * 1.3
    total = broad.total
    total.num_w = total.num_b * 1.3
    assert admit_null(broad).admitted
