"""Refuse SQL that builds one huge value in a single engine call, before any engine runs it.

Engines bound what they can interrupt: DuckDB's `memory_limit` stops `string_agg` over three
million rows, PostgreSQL's `statement_timeout` and the watchdog stop a long scan. But one scalar
call that builds one value (`repeat('x', 2000000000)` in DuckDB: 3.9 GB and 40 s; the scalar list
`range(30000000)`: 2.3 GB and 38 s) is neither tracked by DuckDB's memory limit nor interruptible:
the watchdog's `interrupt()` lands only after the call returns. So the size arguments of the
functions that build a value from a number must be literal numbers, and the value they build at
most `MAX_BUILT` characters (or list elements) when computed once, `MAX_BUILT_PER_ROW` when an
argument changes per row. Analytics over a warehouse never needs more; the
refusal says what to write instead.

Known limit (docs/decisions/0065): a value can still grow by concatenating or replacing inside a
value an aggregate built (`replace(string_agg(...), 'x', 'xxxx')`); DuckDB's memory limit stops
the aggregate at its limit, and the amplification is by a literal factor of the query's own
length.
"""

from __future__ import annotations

import re

from sqlglot import exp

# A builder whose arguments are all constants is computed once per query (the engines fold
# constant calls), so its one value may be large; one with a per-row argument (a column, a
# subquery) builds a value for every row, up to 2,048 at once in DuckDB, so its cap is small.
MAX_BUILT = 16 * 2**20
MAX_BUILT_PER_ROW = 10_000
_PRINTF = re.compile(r"%[-+ #0-9.*$]*[a-zA-Z]")
_FMT = re.compile(r"\{[^{}]*\}")
_DIGITS = re.compile(r"\d+")
_NAMED = ("printf", "format", "list_resize", "array_resize", "randomblob", "zeroblob", "space",
          "bar", "array_fill")  # fmt: skip


def function_name(node: exp.Func) -> str:
    """The SQL name of a function node, lower case."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return str(node.sql_name()).lower()


def _number(node: exp.Expression | None) -> float | None:
    """The value of a constant numeric expression (literals, signs, + - * /), else None."""
    if node is None:
        return None
    if isinstance(node, exp.Paren):
        return _number(node.this)
    if isinstance(node, exp.Cast | exp.TryCast):
        return _number(node.this)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return None
        try:
            return float(node.this)
        except ValueError:
            return None
    if isinstance(node, exp.Neg):
        inner = _number(node.this)
        return None if inner is None else -inner
    if isinstance(node, exp.Add | exp.Sub | exp.Mul | exp.Div):
        left, right = _number(node.this), _number(node.expression)
        if left is None or right is None:
            return None
        if isinstance(node, exp.Add):
            return left + right
        if isinstance(node, exp.Sub):
            return left - right
        if isinstance(node, exp.Mul):
            return left * right
        return None if right == 0 else left / right
    return None


def _text_length(node: exp.Expression | None) -> float | None:
    """Length of a string argument when it is known before running: a literal or a builder."""
    if isinstance(node, exp.Paren):
        return _text_length(node.this)
    if isinstance(node, exp.Literal) and node.is_string:
        return float(len(node.this))
    if isinstance(node, exp.Repeat | exp.Pad | exp.Format | exp.Replace | exp.RegexpReplace) or (
        isinstance(node, exp.Anonymous) and str(node.name).lower() in _NAMED
    ):
        return built_size(node)
    return None  # a column or an expression: its length is only known at run time


def _args(node: exp.Expression) -> list[exp.Expression]:
    return list(node.expressions) if isinstance(node, exp.Anonymous) else []


def _format_width(fmt: exp.Expression | None) -> float | None:
    """The widest field a printf/format string asks for; None when the string is not literal
    or takes its width from an argument (`%*d`, `{:>{}}`)."""
    if not isinstance(fmt, exp.Literal) or not fmt.is_string:
        return None
    text = str(fmt.this)
    specs = _PRINTF.findall(text) + _FMT.findall(text)
    if any("*" in s or s.count("{") > 1 for s in specs) or "{{:" in text:
        return None
    widths = [float(d) for s in specs for d in _DIGITS.findall(s)]
    return max(widths, default=0.0) + len(text)


def amplification(node: exp.Replace | exp.RegexpReplace) -> float | None:
    """How many times longer replace()/regexp_replace() can make its input; None when the
    replacement's length is only known at run time. A regex may match every character (or the
    empty string between them) and copy the match with backreferences: 1 + 2 x its length."""
    repl = _text_length(node.args.get("replacement"))
    if repl is None:
        return None
    if isinstance(node, exp.RegexpReplace):
        return 1.0 + 2.0 * repl
    search = _text_length(node.expression)
    return max(1.0, repl / max(1.0, search if search is not None else 1.0))


def built_size(node: exp.Expression) -> float | None:
    """How large a value `node` builds from its size arguments (characters or elements); 0 for
    nodes that are not value builders, None when the size is not known before running.
    replace()/regexp_replace() build their input times their growth (the input counts 1 when
    it is a column: the growth alone is then bounded, per row)."""
    if isinstance(node, exp.Replace | exp.RegexpReplace):
        factor, base = amplification(node), _text_length(node.this)
        return None if factor is None else factor * (base if base is not None else 1.0)
    name = ""
    if isinstance(node, exp.Anonymous):
        name = str(node.name).lower()
    if isinstance(node, exp.Repeat):
        times, base = _number(node.args.get("times")), _text_length(node.this)
        return None if times is None or base is None else max(times, 0) * base
    if isinstance(node, exp.Pad):
        return _number(node.expression)
    if isinstance(node, exp.GenerateSeries):
        start = _number(node.args.get("start"))
        end = _number(node.args.get("end"))
        step = _number(node.args.get("step")) if node.args.get("step") is not None else 1.0
        if start is None or end is None or not step:
            return None
        return max(0.0, (end - start) / step + 1)
    if isinstance(node, exp.Format) or name in ("printf", "format"):
        fmt = node.this if isinstance(node, exp.Format) else next(iter(_args(node)), None)
        return _format_width(fmt)
    if name in ("list_resize", "array_resize", "randomblob", "zeroblob", "space"):
        args = _args(node)
        size_arg = args[1] if name.endswith("resize") and len(args) > 1 else next(iter(args), None)
        return _number(size_arg)
    if name == "bar":
        args = _args(node)
        return _number(args[3]) if len(args) > 3 else 80.0
    if name == "array_fill":
        args = _args(node)
        dims = args[1] if len(args) > 1 else None
        if not isinstance(dims, exp.Array):
            return None
        total = 1.0
        for d in dims.expressions:
            n = _number(d)
            if n is None:
                return None
            total *= max(n, 0)
        return total
    return 0.0


def _streams(node: exp.Expression) -> bool:
    """A series in FROM (a table function) or PostgreSQL's set-returning form streams its rows;
    only DuckDB's scalar list form builds them all at once."""
    if isinstance(node, exp.ExplodingGenerateSeries):
        return True
    return isinstance(node, exp.GenerateSeries) and isinstance(node.parent, exp.Table)


def _constant(node: exp.Expression) -> bool:
    """Whether every argument is the same for every row (no column, subquery or aggregate)."""
    return next(node.find_all(exp.Column, exp.Select, exp.AggFunc, exp.Window), None) is None


def size_problem(node: exp.Expression) -> str | None:
    """A one-line refusal when `node` builds a value too large, or of a size only known at run
    time; None otherwise."""
    if _streams(node):
        return None
    size = built_size(node)
    cap = MAX_BUILT if _constant(node) else MAX_BUILT_PER_ROW
    if size is not None and size <= cap:
        return None
    name = function_name(node) if isinstance(node, exp.Func) else type(node).__name__.lower()
    if isinstance(node, exp.GenerateSeries):
        name = "range/generate_series"
    if isinstance(node, exp.Pad):
        name = "lpad" if node.args.get("is_left") else "rpad"
    if size is None and isinstance(node, exp.Replace | exp.RegexpReplace):
        return (
            f"{name}() with a replacement whose length is only known at run time may grow a "
            "value without bound; give it a literal replacement"
        )
    if size is None:
        return (
            f"{name}() builds a value whose size is only known at run time; give it literal "
            f"sizes (at most {MAX_BUILT:,} characters or elements)"
            + ("; or use it in FROM as a table" if isinstance(node, exp.GenerateSeries) else "")
        )
    return (
        f"{name}() would build a value of about {size:,.0f} characters or elements; the limit "
        f"is {cap:,}{'' if cap == MAX_BUILT else ' when it is built per row'}: aggregate or "
        "filter instead of building huge values"
    )


# A recursive CTE's step may grow a value by a bounded piece (`path || '/' || name`), never by a
# factor (`s || s` doubles it: 2^30 bytes in 30 steps, faster than any timer): the engines
# cannot estimate how many steps a recursion takes, so its growth is checked here.
_AMPLIFIERS = (
    "replace", "regexp_replace", "overlay", "encode", "repeat", "lpad", "rpad", "format",
    "printf", "translate", "array_fill", "list_resize", "array_resize",
)  # fmt: skip
_NUMERIC = (
    "length", "char_length", "character_length", "octet_length", "bit_length", "strpos",
    "position", "array_length", "cardinality", "count", "sum", "min", "max", "avg",
)  # fmt: skip


def _cte_columns(cte: exp.CTE) -> list[str]:
    alias = cte.args.get("alias")
    named = (
        [str(c.name).lower() for c in alias.columns] if isinstance(alias, exp.TableAlias) else []
    )
    if named:
        return named
    anchor = cte.this
    while isinstance(anchor, exp.SetOperation):
        anchor = anchor.this
    return [str(e.alias_or_name).lower() for e in getattr(anchor, "selects", [])]


def _growth(node: exp.Expression, refs: set[str], columns: set[str]) -> tuple[float, float]:
    """(a, b) with the size of `node` at most a * S + b, where S is the size of the recursive
    CTE's largest value in the previous step."""
    if isinstance(node, exp.Column):
        table = str(node.table).lower()
        # a previous step's value: a growing column of the CTE, named bare or through its alias
        mine = (not table or table in refs) and str(node.name).lower() in columns
        return (1.0, 0.0) if mine else (0.0, 0.0)
    if isinstance(node, exp.Literal):
        return (0.0, float(len(node.this)) if node.is_string else 0.0)
    if isinstance(node, exp.Predicate | exp.Connector | exp.Not | exp.Length | exp.Subquery):
        return (0.0, 0.0)
    if isinstance(node, exp.Add | exp.Sub | exp.Mul | exp.Div | exp.Mod):
        return (0.0, 0.0)  # numbers
    name = function_name(node) if isinstance(node, exp.Func) else ""
    if name in _NUMERIC:
        return (0.0, 0.0)
    if isinstance(node, exp.Case | exp.If | exp.Coalesce):
        branches = [_growth(c, refs, columns) for c in node.iter_expressions()]
        return max((g[0] for g in branches), default=0.0), max(
            (g[1] for g in branches), default=0.0
        )
    parts = [_growth(c, refs, columns) for c in node.iter_expressions()]
    a, b = sum(p[0] for p in parts), sum(p[1] for p in parts)
    built = built_size(node)
    if isinstance(node, exp.Repeat | exp.Pad) or name in _AMPLIFIERS:
        if a > 0 and not _shrinking_replace(node):
            return (max(a, 2.0), b)  # amplifies the recursive value by a factor
        return (0.0, max(b, built or 0.0)) if a == 0 else (a, b)
    return (a, b)


def _shrinking_replace(node: exp.Expression) -> bool:
    """replace(s, 'search', 'repl') with literal strings no longer than the search: no growth."""
    if not isinstance(node, exp.Func) or function_name(node) != "replace":
        return False
    found = list(node.iter_expressions())
    if len(found) != 3 or not all(isinstance(a, exp.Literal) and a.is_string for a in found[1:]):
        return False
    return len(str(found[2].this)) <= len(str(found[1].this))


def growth_problem(cte: exp.CTE) -> str | None:
    """A one-line refusal when a recursive CTE's step grows a value by a factor or by more than
    `MAX_BUILT_PER_ROW` characters; None for other CTEs.

    Only columns that themselves grow count: `s || '/' || i` with `i` a counter (`i + 1`) or a
    key copied from a table each step appends a bounded piece to `s`."""
    with_ = cte.parent
    if not isinstance(with_, exp.With) or not with_.args.get("recursive"):
        return None
    name = str(cte.alias_or_name).lower()
    columns = _cte_columns(cte)
    for select in cte.this.find_all(exp.Select):
        refs = {
            str(t.alias_or_name).lower()
            for t in select.find_all(exp.Table)
            if str(t.name).lower() == name and t.find_ancestor(exp.Select) is select
        }
        if not refs:
            continue
        steps = list(zip(columns, select.selects, strict=False))
        growing = set(columns)
        while True:  # drop columns whose step does not use a growing column, until stable
            still = {col for col, e in steps if _growth(e, refs, growing)[0] >= 1}
            if still == growing:
                break
            growing = still
        for _, expression in steps:
            a, b = _growth(expression, refs, growing)
            if a > 1:
                return (
                    f"the recursive CTE {name} grows a value by a factor each step "
                    f"({expression.sql()[:60]}); a step may only append a bounded piece, "
                    "e.g. path || '/' || name"
                )
            if a >= 1 and b > MAX_BUILT_PER_ROW:
                return (
                    f"the recursive CTE {name} appends about {b:,.0f} characters per step; the "
                    f"limit is {MAX_BUILT_PER_ROW:,}: append a shorter piece"
                )
    return None
