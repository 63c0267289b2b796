"""SQL verifier cost per task, including the test suite of fuzzed databases.

Builds a synthetic nycflights-like DuckDB (~300k flights) in a temp dir, then for each gold query:
builds its fuzz suite (cold, then cached), and times `verify_sql` of a correct rewrite and of a
near-miss neighbour over the real database plus the copies. Also prints the share of neighbour
queries the suite catches, and the read-only executor's latency with and without `hold_open`.
Prints numbers; asserts nothing.

    python bench/sql_verifier.py [--flights 300000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import duckdb

from workgym.verifiers.sql import GoldCache, SqlAnswerSpec, verify_sql
from workgym.verifiers.sql_exec import execute_sql, hold_open
from workgym.verifiers.sql_fuzz import build_suite, suite_report

BUILD = """
CREATE TABLE airlines AS SELECT * FROM (VALUES ('AA', 'American'), ('B6', 'JetBlue'),
  ('DL', 'Delta'), ('EV', 'ExpressJet'), ('UA', 'United'), ('WN', 'Southwest'), ('MQ', 'Envoy'),
  ('US', 'US Airways')) t(carrier, name);
CREATE TABLE airports AS SELECT * FROM (VALUES ('JFK', 'Kennedy'), ('LGA', 'La Guardia'),
  ('EWR', 'Newark'), ('ATL', 'Atlanta'), ('ORD', 'Chicago'), ('LAX', 'Los Angeles'),
  ('SFO', 'San Francisco'), ('BOS', 'Boston'), ('MIA', 'Miami')) t(faa, name);
CREATE TABLE planes AS SELECT 'N' || lpad(i::VARCHAR, 4, '0') AS tailnum,
  1990 + i % 25 AS year, 50 + (i * 37) % 300 AS seats FROM range(3000) t(i);
CREATE TABLE flights AS SELECT 2013 AS year, 1 + (i * 7) % 12 AS month, 1 + (i * 13) % 28 AS day,
  ['AA','B6','DL','EV','UA','WN','MQ','US'][1 + (hash(i, 1) % 8)::INTEGER] AS carrier,
  ['JFK','LGA','EWR'][1 + (hash(i, 2) % 3)::INTEGER] AS origin,
  ['ATL','ORD','LAX','SFO','BOS','MIA','SJU','BQN'][1 + (hash(i, 3) % 8)::INTEGER] AS dest,
  CASE WHEN i % 97 = 0 THEN NULL ELSE 'N' || lpad((hash(i, 4) % 3300)::VARCHAR, 4, '0') END
    AS tailnum,
  CASE WHEN hash(i, 5) % 40 = 0 THEN NULL ELSE (hash(i, 6) % 180)::DOUBLE - 20 END AS dep_delay,
  [760, 733, 2475, 2586, 187, 1089, 1598, 1576][1 + (hash(i, 3) % 8)::INTEGER] AS distance
  FROM range({n}) t(i);
"""

# (gold, spec, a correct rewrite, a near-miss neighbour)
TASKS = [
    (
        "SELECT count(*) FROM flights WHERE dep_delay > 60 AND origin = 'JFK'",
        SqlAnswerSpec(),
        "SELECT count(dep_delay) FROM flights WHERE NOT dep_delay <= 60 AND origin IN ('JFK')",
        "SELECT count(*) FROM flights WHERE dep_delay >= 60 AND origin = 'JFK'",
    ),
    (
        "SELECT carrier, count(*) AS n FROM flights WHERE month = 7 GROUP BY carrier"
        " ORDER BY n DESC, carrier LIMIT 3",
        SqlAnswerSpec(ordered=True),
        "SELECT count(*), carrier FROM flights WHERE month = 7 GROUP BY 2 ORDER BY 1 DESC, 2"
        " LIMIT 3",
        "SELECT carrier, count(*) AS n FROM flights WHERE month = 7 GROUP BY carrier"
        " ORDER BY n DESC, carrier LIMIT 4",
    ),
    (
        "SELECT a.name, avg(f.dep_delay) AS d FROM flights f JOIN airlines a"
        " ON f.carrier = a.carrier WHERE f.distance >= 1000 GROUP BY a.name",
        SqlAnswerSpec(),
        "SELECT name, avg(dep_delay) FROM airlines JOIN flights USING (carrier)"
        " WHERE distance > 999 GROUP BY name",
        "SELECT a.name, avg(f.dep_delay) FROM flights f LEFT JOIN airlines a"
        " ON f.carrier = a.carrier WHERE f.distance >= 1000 GROUP BY a.name",
    ),
    (
        "SELECT f.dest, count(*) AS n FROM flights f LEFT JOIN airports p ON f.dest = p.faa"
        " WHERE p.faa IS NULL GROUP BY f.dest",
        SqlAnswerSpec(),
        "SELECT dest, count(*) FROM flights f WHERE NOT EXISTS"
        " (SELECT 1 FROM airports a WHERE a.faa = f.dest) GROUP BY dest",
        "SELECT f.dest, count(*) AS n FROM flights f JOIN airports p ON f.dest = p.faa"
        " WHERE p.faa IS NULL GROUP BY f.dest",
    ),
    (
        "SELECT p.year, count(*) AS n FROM flights f JOIN planes p ON f.tailnum = p.tailnum"
        " WHERE p.seats >= 200 AND f.origin = 'EWR' GROUP BY p.year",
        SqlAnswerSpec(),
        "SELECT planes.year, count(*) FROM planes JOIN flights USING (tailnum)"
        " WHERE seats > 199 AND origin = 'EWR' GROUP BY planes.year",
        "SELECT p.year, count(*) AS n FROM flights f JOIN planes p ON f.tailnum = p.tailnum"
        " WHERE p.seats > 200 AND f.origin = 'EWR' GROUP BY p.year",
    ),
    (
        "SELECT origin, dest FROM flights WHERE distance < 800 AND month <= 3 AND day = 1",
        SqlAnswerSpec(),
        "SELECT origin, dest FROM flights WHERE month IN (1, 2, 3) AND day = 1 AND distance < 800",
        "SELECT DISTINCT origin, dest FROM flights WHERE distance < 800 AND month <= 3 AND day = 1",
    ),
]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flights", type=int, default=300_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "flights.duckdb"
        start = time.perf_counter()
        con = duckdb.connect(str(db))
        con.execute(BUILD.format(n=args.flights))
        con.close()
        built = _ms(time.perf_counter() - start)
        print(f"synthetic warehouse: {args.flights} flights, built in {built}")
        print(
            f"{'task':>4} {'suite cold':>12} {'suite cached':>13} {'verify right':>13}"
            f" {'verify wrong':>13} {'held open':>12} {'gold on real':>13}  caught  copies"
        )
        totals: dict[str, list[float]] = {"cold": [], "right": [], "wrong": [], "held": []}
        caught = valid = 0
        for n, (gold, spec, right, wrong) in enumerate(TASKS):
            start = time.perf_counter()
            suite = build_suite(db, gold, spec=spec, cache_dir=Path(tmp) / "fuzz")
            cold = time.perf_counter() - start
            start = time.perf_counter()
            build_suite(db, gold, spec=spec, cache_dir=Path(tmp) / "fuzz")
            cached = time.perf_counter() - start
            cache = GoldCache()
            start = time.perf_counter()
            ok = verify_sql(right, gold, spec, suite.databases, gold_cache=cache)
            t_right = time.perf_counter() - start
            start = time.perf_counter()
            bad = verify_sql(wrong, gold, spec, suite.databases, gold_cache=cache)
            t_wrong = time.perf_counter() - start
            with hold_open(suite.databases):  # an eval run keeps the instances open
                verify_sql(wrong, gold, spec, suite.databases, gold_cache=cache)
                start = time.perf_counter()
                verify_sql(wrong, gold, spec, suite.databases, gold_cache=cache)
                t_held = time.perf_counter() - start
            gold_real = ok.evidence["databases"][0]["gold_s"]
            report = suite_report(suite)
            caught += sum(suite.caught)
            valid += sum(not b for b in suite.invalid)
            mark = "" if ok.success and not bad.success else "  (UNEXPECTED VERDICT)"
            print(
                f"{n:>4} {_ms(cold):>12} {_ms(cached):>13} {_ms(t_right):>13} {_ms(t_wrong):>13}"
                f" {_ms(t_held):>12} {_ms(gold_real):>13}  {report['catch_rate']:>6}"
                f"  {report['copies']}{mark}"
            )
            totals["cold"].append(cold)
            totals["right"].append(t_right)
            totals["wrong"].append(t_wrong)
            totals["held"].append(t_held)
        print(
            f"mean: suite build {_ms(statistics.mean(totals['cold']))}, verify (right, gold"
            f" uncached) {_ms(statistics.mean(totals['right']))}, verify (wrong, gold cached)"
            f" {_ms(statistics.mean(totals['wrong']))}, verify (instances held open)"
            f" {_ms(statistics.mean(totals['held']))}"
        )
        print(f"neighbours caught over all tasks: {caught}/{valid} = {caught / valid:.2f}")
        _executor_latency(db)


def _executor_latency(db: Path) -> None:
    sql = "SELECT origin, count(*) FROM flights WHERE dep_delay > 30 GROUP BY origin"
    for label, held in (("fresh instance", False), ("hold_open", True)):
        times = []
        with hold_open([db] if held else []):
            for _ in range(40):
                start = time.perf_counter()
                execute_sql(sql, db)
                times.append(time.perf_counter() - start)
        times.sort()
        p50, p95 = times[len(times) // 2], times[int(len(times) * 0.95)]
        print(f"execute_sql ({label}): p50 {_ms(p50)}, p95 {_ms(p95)}")


if __name__ == "__main__":
    main()
