"""Ecosystem adapters: a workgym environment inside Gymnasium, verifiers, OpenEnv and Inspect AI.

Each module needs its own extra and imports its ecosystem lazily, so importing one adapter never
drags in the others (their pins conflict; see docs/adapters.md). Nothing in workgym imports this
package: it sits at the top of the layers.
"""
