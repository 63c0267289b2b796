"""Guards against reward hacking (docs/guards.md): probes, baselines, the transcript audit, reviews
and the admission gate.

Import from the module that defines a name: `guards.attack` (`attack_async`, `AttackReport`),
`guards.audit`, `guards.baselines` (`run_baselines`), `guards.admission` (`require_admitted`),
`guards.review` (`is_trusted`, `TrustedOutcomes`), `guards.capabilities`, `guards.catalog`
(`probes`). This package itself imports nothing: the episode loop imports `guards.audit` on every
run, and the probe catalog and attack runner load only when a command needs them.
"""
