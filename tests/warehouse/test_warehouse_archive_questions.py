"""What rounds 16-17's blind judges found on debian_history, each as a known answer (decision
0197).

A small package archive built here: packages (a few essential, fewer obsolete) and their
relations, where a relation with no version operator has no target version either, and
essential packages declare only breaks relations; and store sales, which a satisfaction score
or loyalty points could describe. Each test fails on the generator before 0197.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from warehouse_built import built, family_context

from workgym.envs.warehouse.generate.families import FAMILIES, Context
from workgym.envs.warehouse.generate.families.draft import Draft
from workgym.envs.warehouse.generate.families.gold_answer import Rejected
from workgym.envs.warehouse.generate.families.joins import _ref_conditions
from workgym.envs.warehouse.generate.families.unanswerable import CONCEPTS, _describes
from workgym.envs.warehouse.generate.families.validate import Runner, check
from workgym.envs.warehouse.generate.phrasing import TEMPLATES
from workgym.envs.warehouse.schema.card import SchemaCard

ARCHIVE = """
CREATE TABLE package (name VARCHAR PRIMARY KEY, section VARCHAR, essential BOOLEAN,
                      obsolete BOOLEAN, installed_size_kib DOUBLE);
INSERT INTO package SELECT 'p' || i, ['libs', 'utils', 'devel', 'admin'][1 + i % 4],
    i % 12 = 0, i % 100 = 1, 100.5 + (i % 40) * 25 FROM range(200) t(i);
CREATE TABLE package_relation (package VARCHAR REFERENCES package (name), relation VARCHAR,
                               version_operator VARCHAR, target_version VARCHAR);
INSERT INTO package_relation SELECT 'p' || (i % 200),
    CASE WHEN i % 200 % 12 = 0 THEN 'breaks'
         ELSE ['depends', 'breaks', 'suggests', 'recommends'][1 + i % 4] END,
    CASE WHEN i % 5 = 0 THEN NULL ELSE ['>=', '<<', '='][1 + i % 3] END,
    CASE WHEN i % 5 = 0 THEN NULL ELSE '1.' || (i % 7) END
  FROM range(2000) t(i);
CREATE TABLE store_sale (package VARCHAR REFERENCES package (name), channel VARCHAR,
                         quantity INTEGER);
INSERT INTO store_sale SELECT 'p' || (i % 200), ['web', 'shop', 'phone'][1 + i % 3], 1 + i % 9
  FROM range(300) t(i);
"""


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> tuple[SchemaCard, Path]:
    return built(tmp_path_factory.mktemp("archive"), "archive", ARCHIVE)


def test_an_absent_qualifier_is_not_missing_data(archive: tuple[SchemaCard, Path]) -> None:
    ctx = family_context(*archive)
    drafts = list(FAMILIES["F7"](ctx))
    assert not any("version operator" in str(d.slots) for d in drafts)
    skipped = " ".join(ctx.skipped)
    assert "package_relation.version_operator: NULL with target_version" in skipped
    assert "package_relation.target_version: NULL exactly for some values" in skipped


def drafts_of(ctx: Context, table: str) -> list[Draft]:
    every = FAMILIES["F10"](ctx)
    return [d for d in every if d.shape == "missing_concept" and d.tables == (table,)]


def test_missing_concepts_are_asked_only_of_rows_they_could_describe(
    archive: tuple[SchemaCard, Path],
) -> None:
    ctx = family_context(*archive)
    drafts = drafts_of(ctx, "package_relation")
    assert drafts == []  # no passengers, refunds or ticket prices of package relations
    assert "package_relation: no missing concept that its rows could have" in " ".join(ctx.skipped)
    # a score is averaged, never totalled; a sale's loyalty points may be either
    metrics = {d.slots["metric"] for d in drafts_of(ctx, "store_sale")}
    assert "average customer satisfaction score" in metrics
    assert "total customer satisfaction score" not in metrics
    assert "total loyalty points earned" in metrics
    fits = {c.name for c in CONCEPTS if _describes(c, "flight")}
    assert {"ticket price", "number of passengers", "fuel consumption"} <= fits
    assert "employee headcount" not in fits and "population" not in fits
    assert {c.name for c in CONCEPTS if _describes(c, "subdivision")} == {"population", "land area"}


def test_a_condition_on_the_referenced_row_must_pick_out_packages(
    archive: tuple[SchemaCard, Path],
) -> None:
    # 198 of 200 packages are not obsolete: no question filters on that; 183 are not essential
    ctx = family_context(*archive)
    said = [c.words(ctx.lexicon) for c in _ref_conditions(ctx, archive[0].table("package"))]
    assert "the package is not essential" in " ".join(said)
    assert not any("not obsolete" in w for w in said) and any("is obsolete" in w for w in said)


def test_a_condition_on_the_referenced_row_must_cut_the_rows_own_set(
    archive: tuple[SchemaCard, Path],
) -> None:
    # essential packages declare only breaks: "recommends relations whose package is
    # not essential" keeps every recommends relation, though only 23% of all relations
    ctx = family_context(*archive)
    runner = Runner(archive[1])
    reasons = []
    for d in FAMILIES["F3"](ctx):
        if d.shape != "one_hop" or "essential" not in d.slots["conds"]:
            continue
        if d.slots["conds"] != "relation is 'recommends' and the package is not essential":
            continue
        try:
            check(d, runner)
            reasons.append("kept")
        except Rejected as e:
            reasons.append(str(e))
    assert reasons and all("near-total" in r for r in reasons)


def test_no_anti_join_says_used_by_none() -> None:
    # record talk, judged stilted in rounds 11 (twice) and 16
    assert not any("used by none" in t for t in TEMPLATES["F6"])


def test_rows_picked_by_what_they_have_read_as_english(archive: tuple[SchemaCard, Path]) -> None:
    # round 18's second judge: "packages where they have at least one package relation ..."
    from workgym.envs.warehouse.generate.phrasing import render

    fan_out = [d for d in FAMILIES["F3"](family_context(*archive)) if "having" in d.slots]
    assert fan_out
    for i in range(4):
        said = render("F3", i, fan_out[0].slots)
        assert "at least one package relation" in said and "they have" not in said
