"""F10 unanswerable: questions that read like the others but the warehouse cannot answer.

The right answer is to abstain with the reason, not to produce a number:
- missing_data: the question needs a concept no table or column holds (ticket prices in a
  flights warehouse). A concept is used only when none of its keywords appears in any table or
  column name or comment of the card, only of rows it could describe (a flight's ticket price,
  a subdivision's population; never a package relation's passengers), and a check query
  confirms the rest of the question (its filter) does match rows, so the only thing missing is
  the concept itself.
- out_of_range: the question asks about a year the data does not cover; a check query confirms
  that no row falls in it.
The surface form asks for an ordinary answer (a number, an integer), so the task measures
whether an agent checks before answering.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sqlglot import exp

from workgym.envs.warehouse.generate.families.calendar import calendar_of
from workgym.envs.warehouse.generate.families.draft import Context, Draft
from workgym.envs.warehouse.generate.families.filters import dim_conditions, measure_conditions
from workgym.envs.warehouse.generate.families.sqlast import count_star, lit, table
from workgym.envs.warehouse.schema.card import SchemaCard, TableCard

FAMILY = "F10"
FLIGHTS = frozenset({"flight", "trip", "booking", "journey"})
SALES = frozenset({"sale", "order", "invoice", "purchase", "transaction"})
PLACES = frozenset({"country", "subdivision", "territory", "city", "region", "state",
                    "province", "district", "county", "municipality"})  # fmt: skip
RELEASES = frozenset({"package", "release", "upload"})


@dataclass(frozen=True)
class Concept:
    """A quantity a warehouse may lack: asked only when none of `keywords` occurs in the
    schema, and only of rows it could describe (`rows`, singular head nouns). "The total number
    of passengers of package relations" is missing from a Debian archive, but nobody would ask
    for it: round 16's blind judge called three such questions meaningless (decision 0197)."""

    name: str
    keywords: tuple[str, ...]
    rows: frozenset[str]
    summable: bool = True  # "the total customer satisfaction score" is no quantity: averaged


CONCEPTS: list[Concept] = [
    Concept("ticket price", ("price", "fare", "ticket"), FLIGHTS),
    Concept("number of passengers", ("passenger", "pax"), FLIGHTS),
    # a credit rating (TPC-DS's customer demographics) is no satisfaction score
    Concept("customer satisfaction score", ("satisfaction", "survey", "score"),
            FLIGHTS | SALES | {"return", "visit", "call"}, summable=False),
    Concept("loyalty points earned", ("loyalty", "points", "reward"), SALES),
    Concept("refund processing time", ("processing",), frozenset({"return"}), summable=False),
    Concept("fuel consumption", ("fuel",), FLIGHTS),
    Concept("crew size", ("crew",), frozenset({"flight"})),
    Concept("revenue", ("revenue", "sales", "price", "amount"), SALES | {"flight", "booking"}),
    Concept("profit margin", ("profit", "margin"), SALES, summable=False),
    Concept("employee headcount", ("employee", "headcount", "staff"),
            frozenset({"store", "branch", "department", "office", "company"})),
    Concept("marketing spend", ("marketing", "campaign", "spend"),
            frozenset({"campaign", "product", "brand"})),
    Concept("refund amount", ("refund",), SALES | {"return", "booking"}),
    Concept("customer age", ("age", "birth"), SALES | {"booking"}, summable=False),
    Concept("CO2 emissions", ("co2", "emission", "carbon"), FLIGHTS | {"shipment", "delivery"}),
    Concept("baggage weight", ("baggage", "luggage", "bag"), frozenset({"flight", "booking"})),
    Concept("population", ("population", "inhabitant", "resident"), PLACES),
    Concept("land area", ("area", "km2", "sq"), PLACES),
    Concept("number of downloads", ("download",), RELEASES | {"changelog entry"}),
    Concept("number of open bug reports", ("bug",), RELEASES),
    Concept("build duration", ("build", "duration"), RELEASES | {"changelog entry"},
            summable=False),
]  # fmt: skip


def absent(card: SchemaCard, keywords: tuple[str, ...]) -> bool:
    text = " ".join(
        " ".join([t.name, t.comment or ""] + [f"{c.name} {c.comment or ''}" for c in t.columns])
        for t in card.tables
    ).lower()
    return not any(k in text for k in keywords)


def drafts(ctx: Context) -> Iterator[Draft]:
    concepts = [c for c in CONCEPTS if absent(ctx.card, c.keywords)]
    if not concepts:
        ctx.skip(FAMILY, "every stock concept occurs in the schema; no missing-data questions")
    facts = ctx.view.facts()
    out: list[Draft] = []
    for t in facts:
        fitting = [c for c in concepts if _describes(c, ctx.lexicon.row(t.name))]
        if concepts and not fitting:
            ctx.skip(FAMILY, f"{t.name}: no missing concept that its rows could have")
        out += list(_missing(ctx, t, fitting))
        out += list(_out_of_range(ctx, t))
    ctx.rng.shuffle(out)
    yield from out


def _describes(concept: Concept, row: str) -> bool:
    """Could `concept` be a quantity of a `row` ("flight", "store sale", "changelog entry")?"""
    return row.lower() in concept.rows or row.lower().split(" ")[-1] in concept.rows


def _missing(ctx: Context, t: TableCard, concepts: list[Concept]) -> Iterator[Draft]:
    lex = ctx.lexicon
    # A star schema's facts hold keys and measures only: filter on a measure then.
    conds = dim_conditions(ctx, t, per_column=2) or measure_conditions(ctx, t)
    for i, concept in enumerate(concepts):
        for j, cond in enumerate(conds[i % 3 :: 3][:4]):
            word = "average" if (i + j) % 2 == 0 or not concept.summable else "total"
            check = exp.select(exp.GT(this=count_star(), expression=lit(0))).from_(table(t.name))
            check = check.where(cond.ast())
            yield Draft(
                family=FAMILY,
                shape="missing_concept",
                kind="abstain",
                slots={
                    "metric": f"{word} {concept.name}",
                    "rows": lex.rows(t.name),
                    "where": f" where {cond.words(lex)}",
                    "surface_kind": "number",
                },
                tables=(t.name,),
                static={"kind": "abstain", "reason": "missing_data"},
                check_sql=check,
                decimals=2,
                note=f"no column holds {concept.name}",
            )


def _out_of_range(ctx: Context, t: TableCard) -> Iterator[Draft]:
    cal = calendar_of(ctx, t)
    if cal is None:
        return
    year_sql = cal.select_from(exp.select(cal.year.copy()).distinct(), t).sql(dialect="duckdb")
    years = [int(r[0]) for r in ctx.lookup(year_sql) if r[0] is not None]
    if not years:
        return
    lex = ctx.lexicon
    conds = dim_conditions(ctx, t, per_column=2)
    outside = [min(years) - d for d in (1, 3, 8)] + [max(years) + d for d in (1, 2, 6)]
    for i, year in enumerate(outside):
        for cond in [None, *conds[i % 2 :: 4][:2]]:
            in_year = exp.EQ(this=cal.year.copy(), expression=lit(year))
            check = cal.select_from(exp.select(exp.EQ(this=count_star(), expression=lit(0))), t)
            check = check.where(in_year)
            where_words = f" in {year}"
            if cond is not None:
                where_words += f" where {cond.words(lex)}"
            yield Draft(
                family=FAMILY,
                shape="year_not_covered",
                kind="abstain",
                slots={
                    "metric": "count",
                    "rows": lex.rows(t.name),
                    "where": where_words,
                    "surface_kind": "integer",
                },
                tables=(t.name,),
                static={"kind": "abstain", "reason": "out_of_range"},
                check_sql=check,
                note=f"the data covers {min(years)}-{max(years)}",
            )
