"""F9: investigations with planted causes, their verifier, and findings on real data.

`build.build_investigation_tasks` plants one cause per task in a copy of the snapshot (or none),
gates it for solvability and phrases it; `conclusion.verify_conclusion` scores a submitted
conclusion by slice IoU with evidence re-run; `oracle.oracle_turns` solves a task through the
real tools (for `workgym check`); `workgym investigate` runs a trained policy on the real,
unplanted data (`findings`).

This is the top stage of the warehouse wing (source < schema < runtime < generate < investigate):
it may use every stage below, and none of them imports it. `generate` and `WarehouseEnv` reach it
through the registry, as the task family `F9` (`family`, declared in the entry-point group
`workgym.warehouse_families`); the conclusion schema itself (`runtime.conclusion_answer`) sits in
the runtime, beside the other answer kinds the submit tool accepts.
"""
