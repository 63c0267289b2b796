"""The core: tasks, tools, verdicts, the environment contract and the episode driver and record.

It imports nothing else of workgym, so every other layer can build on it."""
