"""A small synthetic OLTP store in SQLite (issue 40, time through headers): customers,
products (with a launch date many products share: a date that is not when a line happened),
an `orders` header carrying the order date, and `order_lines` with product, quantity and price
but no date of their own. No foreign key is declared: the generator must
infer them. Built from a seeded random generator, so every run gets the same file."""

from __future__ import annotations

import datetime as dt
import random
import sqlite3
from pathlib import Path

CITIES = ["Lyon", "Paris", "Nice", "Lille", "Metz", "Brest", "Dijon", "Tours"]
CATEGORIES = ["Beverages", "Condiments", "Dairy", "Produce", "Seafood", "Grains"]
SHIP_MODES = ["Ground", "Air", "Pickup"]


def build_store(
    path: Path,
    orders: int = 400,
    days: int = 91,
    products: int = 12,
    best_sellers: bool = True,
    seed: int = 40,
) -> Path:
    """Write the store to `path` and return it. Products sell by a Zipf law (a few best
    sellers), as shops do, or all alike (`best_sellers=False`)."""
    rng = random.Random(seed)
    path.unlink(missing_ok=True)
    db = sqlite3.connect(str(path))
    db.executescript(
        """
        CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, customer_name TEXT, city TEXT);
        CREATE TABLE products (product_id INTEGER PRIMARY KEY, product_name TEXT,
                               category TEXT, list_price REAL, launched DATE);
        CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER,
                             order_date DATE, ship_mode TEXT, status TEXT);
        CREATE TABLE order_lines (order_id INTEGER, line_number INTEGER, product_id INTEGER,
                                  quantity INTEGER, unit_price REAL);
        """
    )
    db.executemany(
        "INSERT INTO customers VALUES (?, ?, ?)",
        [(i, f"Customer {i:03d}", CITIES[i % len(CITIES)]) for i in range(1, 61)],
    )
    launches = [dt.date(2020, 1 + i % 3, 1).isoformat() for i in range(products)]  # shared dates
    catalogue = [
        (i, f"Product {i:03d}", CATEGORIES[i % len(CATEGORIES)], round(4 + i * 2.5, 2), day)
        for i, day in zip(range(1, products + 1), launches, strict=True)
    ]
    db.executemany("INSERT INTO products VALUES (?, ?, ?, ?, ?)", catalogue)
    popularity = [1 / (rank + 1) if best_sellers else 1.0 for rank in range(len(catalogue))]
    start = dt.date(2023, 1, 2)
    lines = []
    for order_id in range(1, orders + 1):
        day = start + dt.timedelta(days=rng.randrange(days))
        db.execute(
            "INSERT INTO orders VALUES (?, ?, ?, ?, ?)",
            (order_id, rng.randint(1, 60), day.isoformat(), rng.choice(SHIP_MODES),
             rng.choice(["shipped", "shipped", "shipped", "open"])),
        )  # fmt: skip
        for n in range(1, rng.choice([1, 2, 2, 3, 3]) + 1):
            product = rng.choices(catalogue, weights=popularity)[0]
            price = round(product[3] * rng.uniform(0.9, 1.1), 2)
            lines.append((order_id, n, product[0], rng.randint(1, 10), price))
    db.executemany("INSERT INTO order_lines VALUES (?, ?, ?, ?, ?)", lines)
    db.commit()
    db.close()
    return path
