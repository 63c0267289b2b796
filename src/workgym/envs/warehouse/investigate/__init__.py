"""F9: investigations with planted causes, their verifier, and findings on real data.

`build.build_investigation_tasks` plants one cause per task in a copy of the snapshot (or none),
gates it for solvability and phrases it; `conclusion.verify_conclusion` scores a submitted
conclusion by slice IoU with evidence re-run; `oracle.oracle_turns` solves a task through the
real tools (for `workgym check`); `workgym investigate` runs a trained policy on the real,
unplanted data (`findings`).

This package itself imports nothing: the warehouse answer schema imports `investigate.answer`,
and loading the whole package at that point would import the generator back.
"""
