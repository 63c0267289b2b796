"""Statistics: intervals, paired tests, non-inferiority, pass@k and power (a leaf layer).

The certificate, summaries and swarm comparisons all use these; nothing here imports the rest
of workgym. Import from the module that defines a name: `workgym.stats.results` (the typed
results), `workgym.stats.bootstrap` (cluster and paired bootstraps, sign-flip tests) and
`workgym.stats.tests` (intervals, paired and non-inferiority tests, pass@k, power). This package
itself imports nothing, so importing a command does not pay for numpy and scipy until a
statistic is needed.
"""
