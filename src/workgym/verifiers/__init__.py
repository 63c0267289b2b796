"""Verifiers: what "correct" means for each kind of answer.

Each verifier declares its semantics and returns a `workgym.core.verdict.Verdict` that says why
as well as how much. SQL answers live in `sql` (result-set comparison and the `verify_sql` entry
point), with read-only execution proven twice: `sql_guard` (the parsed statement has no write
anywhere) and `sql_exec` (the engine session itself cannot write). `sql_fuzz` builds the test
suite of fuzzed databases that separates a gold query from its near neighbours.
"""
