"""Result-set comparison with declared semantics (docs/warehouse.md, Verification).

Every rule here closes a false-pass path that a published scorer left open, or a false-fail path
that punishes a right answer:

1. Rows are a bag: duplicates count (a set compare passes DISTINCT where gold keeps duplicates).
   Order matters only when declared, and rows tied on the gold sort keys are still a bag.
2. Same number of columns, and ONE column permutation for the whole table, found by search and
   then checked on whole rows (matching columns one by one passes misaligned rows).
3. Numbers: int, float and decimal compare numerically with |a-b| <= max(1e-9, 1e-6 max(|a|,|b|));
   a declared rounding also accepts values equal after rounding both sides (half up).
4. NULL == NULL and NaN == NaN; NULL, 0 and '' all differ; bool is not a number; a numeric
   string is a number only when the task says so.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation
from typing import Any
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

Cell = float | tuple[Any, ...]
Row = tuple[Cell, ...]
_NULL: tuple[str] = ("null",)
_NAN: tuple[str] = ("nan",)
_NUMERIC = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_DEC = Context(prec=60)
MAX_PERMUTATIONS = 200  # full-table checks before the column search gives up
EXACT_MATCHING_MAX = 200  # leftover group size up to which tolerant matching is exact


class SqlAnswerSpec(BaseModel):
    """How a task's SQL answer is compared; declared by the task, recorded with its verdicts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ordered: bool = False
    order_keys: list[str | int] | None = None  # gold column names or 0-based indexes
    allow_extra_columns: bool = False
    rounding: int | None = Field(default=None, ge=0, le=15)  # decimal places stated in the task
    numeric_strings: bool = False


class Comparison(BaseModel):
    match: bool
    reason: str = ""
    mapping: list[int] | None = None  # gold column i is candidate column mapping[i]
    permutations_tried: int = 0


def _number(v: float) -> Cell:
    return _NAN if v != v else v


def norm_cell(v: Any, numeric_strings: bool = False) -> Cell:
    """A comparable form of one value: a float for numbers, a tagged tuple for everything else."""
    if v is None:
        return _NULL
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, int | float):
        return _number(float(v))
    if isinstance(v, Decimal):
        return _NAN if v.is_nan() else _number(float(v))
    if isinstance(v, str):
        if numeric_strings and _NUMERIC.fullmatch(v.strip()):
            return _number(float(v))
        return ("str", v)
    if isinstance(v, bytes | bytearray | memoryview):
        return ("bytes", bytes(v))
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:  # every session is pinned to UTC: compare instants in UTC
            v = v.astimezone(dt.UTC).replace(tzinfo=None)
        return ("timestamp", v)
    if isinstance(v, dt.date):
        return ("date", v)
    if isinstance(v, dt.time):
        return ("time", v)
    if isinstance(v, dt.timedelta):
        return ("interval", v)
    if isinstance(v, UUID):
        return ("uuid", str(v))
    if isinstance(v, list | tuple):
        return ("list", tuple(norm_cell(x, numeric_strings) for x in v))
    if isinstance(v, dict):
        items = sorted(v.items(), key=lambda kv: repr(kv[0]))
        return ("map", tuple((repr(k), norm_cell(x, numeric_strings)) for k, x in items))
    return ("other", repr(v))


def _round(x: float, places: int) -> float:
    try:
        q = Decimal(repr(x)).quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP, _DEC)
    except InvalidOperation:
        return x
    return float(q)


def num_eq(a: float, b: float, rounding: int | None = None) -> bool:
    if a == b:
        return True
    if math.isinf(a) or math.isinf(b):
        return False
    if abs(a - b) <= max(1e-9, 1e-6 * max(abs(a), abs(b))):
        return True
    return rounding is not None and _round(a, rounding) == _round(b, rounding)


def cell_eq(a: Cell, b: Cell, rounding: int | None = None) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return num_eq(a, b, rounding)
    if isinstance(a, float) or isinstance(b, float) or a[0] != b[0]:
        return False
    if a[0] == "list":
        return len(a[1]) == len(b[1]) and all(
            cell_eq(x, y, rounding) for x, y in zip(a[1], b[1], strict=True)
        )
    if a[0] == "map":
        return len(a[1]) == len(b[1]) and all(
            ka == kb and cell_eq(x, y, rounding)
            for (ka, x), (kb, y) in zip(a[1], b[1], strict=True)
        )
    return a == b


def cell_key(c: Cell, rounding: int | None = None) -> Hashable:
    """A hash key: equal keys imply equal cells (numbers kept to 10 significant digits)."""
    if isinstance(c, float):
        if rounding is not None:
            c = _round(c, rounding)
        return c if math.isinf(c) else float(f"{c:.9e}")
    if c[0] == "list":
        return ("list", tuple(cell_key(x, rounding) for x in c[1]))
    if c[0] == "map":
        return ("map", tuple((k, cell_key(x, rounding)) for k, x in c[1]))
    return c


def _row_eq(a: Row, b: Row, rounding: int | None) -> bool:
    return all(cell_eq(x, y, rounding) for x, y in zip(a, b, strict=True))


def _signature(row: Row, rounding: int | None) -> Hashable:
    return tuple(None if isinstance(c, float) else cell_key(c, rounding) for c in row)


def _numbers(row: Row) -> tuple[float, ...]:
    return tuple(c for c in row if isinstance(c, float))


def _kuhn(gold: list[Row], cand: list[Row], rounding: int | None) -> bool:
    """Exact bipartite matching (augmenting paths) under the tolerant row equality."""
    adj = [[j for j, c in enumerate(cand) if _row_eq(g, c, rounding)] for g in gold]
    owner: list[int] = [-1] * len(cand)

    def augment(i: int, seen: list[bool]) -> bool:
        for j in adj[i]:
            if not seen[j]:
                seen[j] = True
                if owner[j] < 0 or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return all(augment(i, [False] * len(cand)) for i in range(len(gold)))


def bags_equal(
    gold: Sequence[Row],
    cand: Sequence[Row],
    rounding: int | None = None,
    keys: tuple[Sequence[Hashable], Sequence[Hashable]] | None = None,
) -> bool:
    """Multiset equality of rows under tolerant cell equality (duplicates count)."""
    if len(gold) != len(cand):
        return False
    gkeys, ckeys = keys or (
        [tuple(cell_key(c, rounding) for c in r) for r in gold],
        [tuple(cell_key(c, rounding) for c in r) for r in cand],
    )
    pool: dict[Hashable, list[int]] = defaultdict(list)
    for i, k in enumerate(gkeys):
        pool[k].append(i)
    left_c: list[Row] = []
    for j, k in enumerate(ckeys):
        bucket = pool.get(k)
        if bucket:
            bucket.pop()
        else:
            left_c.append(cand[j])
    if not left_c:
        return True
    left_g = [gold[i] for bucket in pool.values() for i in bucket]
    groups: dict[Hashable, tuple[list[Row], list[Row]]] = defaultdict(lambda: ([], []))
    for r in left_g:
        groups[_signature(r, rounding)][0].append(r)
    for r in left_c:
        groups[_signature(r, rounding)][1].append(r)
    for g_rows, c_rows in groups.values():
        if len(g_rows) != len(c_rows):
            return False
        if len(g_rows) <= EXACT_MATCHING_MAX:
            if not _kuhn(g_rows, c_rows, rounding):
                return False
            continue
        # Large tolerant leftovers: pair in sorted order (exact for one numeric column).
        pairs = zip(sorted(g_rows, key=_numbers), sorted(c_rows, key=_numbers), strict=True)
        if not all(_row_eq(a, b, rounding) for a, b in pairs):
            return False
    return True


class _Table:
    """One result normalised once: cells by row, and per-column cells and keys."""

    def __init__(self, columns: list[str], rows: Sequence[Sequence[Any]], spec: SqlAnswerSpec):
        self.names = [c.lower() for c in columns]
        self.rows: list[Row] = [tuple(norm_cell(v, spec.numeric_strings) for v in r) for r in rows]
        width = len(columns)
        self.cols: list[list[Cell]] = [[r[i] for r in self.rows] for i in range(width)]
        self.keys: list[list[Hashable]] = [
            [cell_key(c, spec.rounding) for c in col] for col in self.cols
        ]


def _column_compatible(g: _Table, i: int, c: _Table, j: int, rounding: int | None) -> bool:
    gk, ck = g.keys[i], c.keys[j]
    return bags_equal(
        [(x,) for x in g.cols[i]],
        [(x,) for x in c.cols[j]],
        rounding,
        keys=([(k,) for k in gk], [(k,) for k in ck]),
    )


def _search(
    g: _Table,
    c: _Table,
    compatible: list[list[int]],
    check: Callable[[list[int]], bool],
    first: list[int] | None,
) -> tuple[list[int] | None, int]:
    """Depth-first search for one mapping that passes `check`; identical candidate columns are
    interchangeable, so only one order of each identical group is tried."""
    tried = 0
    if first is not None and all(first[i] in compatible[i] for i in range(len(first))):
        tried += 1
        if len(set(first)) == len(first) and check(first):
            return first, tried
    klass: dict[int, int] = {}
    seen: dict[tuple[Hashable, ...], int] = {}
    for j, keys in enumerate(c.keys):
        klass[j] = seen.setdefault(tuple(keys), j)
    order = sorted(range(len(compatible)), key=lambda i: len(compatible[i]))
    mapping = [-1] * len(compatible)
    used: set[int] = set()

    def dfs(pos: int) -> list[int] | None:
        nonlocal tried
        if tried >= MAX_PERMUTATIONS:
            return None
        if pos == len(order):
            tried += 1
            return list(mapping) if check(mapping) else None
        i = order[pos]
        for j in compatible[i]:
            if j in used:
                continue
            # Among identical candidate columns, take only the lowest unused one.
            if any(klass[o] == klass[j] and o not in used for o in range(j)):
                continue
            used.add(j)
            mapping[i] = j
            found = dfs(pos + 1)
            used.discard(j)
            if found is not None:
                return found
        return None

    return dfs(0), tried


def _segments(g: _Table, order_keys: list[int]) -> list[tuple[int, int]]:
    """Runs of consecutive gold rows tied on the sort keys (compared as bags)."""
    bounds: list[tuple[int, int]] = []
    start = 0
    for r in range(1, len(g.rows) + 1):
        if r == len(g.rows) or any(g.keys[k][r] != g.keys[k][start] for k in order_keys):
            bounds.append((start, r))
            start = r
    return bounds


def compare_results(
    gold_columns: list[str],
    gold_rows: Sequence[Sequence[Any]],
    cand_columns: list[str],
    cand_rows: Sequence[Sequence[Any]],
    spec: SqlAnswerSpec,
    order_keys: list[int] | None = None,
    first_mapping: list[int] | None = None,
) -> Comparison:
    """Compare a candidate result with the gold result under `spec`.

    `order_keys` (gold column indexes) apply when `spec.ordered`; None or [] means every column,
    i.e. strict positional order. `first_mapping` is tried before the search (e.g. the mapping
    that matched on another database).
    """
    k, m = len(gold_columns), len(cand_columns)
    if m < k or (m > k and not spec.allow_extra_columns):
        extra = "" if m < k else "; select only the asked columns"
        return Comparison(match=False, reason=f"expected {k} columns, got {m}{extra}")
    if len(gold_rows) != len(cand_rows):
        reason = f"row count differs: expected {len(gold_rows)}, got {len(cand_rows)}"
        return Comparison(match=False, reason=reason)
    g, c = _Table(gold_columns, gold_rows, spec), _Table(cand_columns, cand_rows, spec)
    compatible: list[list[int]] = []
    for i in range(k):
        options = [j for j in range(m) if _column_compatible(g, i, c, j, spec.rounding)]
        if not options:
            name = gold_columns[i]
            return Comparison(match=False, reason=f"no candidate column has the values of {name!r}")
        # Try the same name first, then the same position, then the rest in order.
        options.sort(key=lambda j: (c.names[j] != g.names[i], j != i, j))
        compatible.append(options)
    keys = order_keys or list(range(k))
    segments = _segments(g, keys) if spec.ordered else [(0, len(g.rows))]
    gkeys = list(zip(*g.keys, strict=True)) if k else [() for _ in g.rows]

    def check(mapping: list[int]) -> bool:
        proj = [tuple(r[j] for j in mapping) for r in c.rows]
        pkeys = [tuple(c.keys[j][n] for j in mapping) for n in range(len(c.rows))]
        return all(
            bags_equal(g.rows[a:b], proj[a:b], spec.rounding, keys=(gkeys[a:b], pkeys[a:b]))
            for a, b in segments
        )

    mapping, tried = _search(g, c, compatible, check, first_mapping)
    if mapping is not None:
        return Comparison(match=True, mapping=mapping, permutations_tried=tried)
    what = "rows in the declared order" if spec.ordered else "rows"
    reason = f"no single column permutation makes the {what} match (tried {tried})"
    if tried >= MAX_PERMUTATIONS:
        reason += "; the column search gave up"
    return Comparison(match=False, reason=reason, permutations_tried=tried)
