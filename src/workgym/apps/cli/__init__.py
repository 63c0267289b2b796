"""The `workgym` command: one module per command group; heavy imports stay inside commands."""
