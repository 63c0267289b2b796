"""`workgym view PATH`: a local web viewer for reading transcripts against ground truth.

Reading what an agent actually did, next to what the right answer was, is how a person attacks a
reward. The viewer serves everything under one directory (runs, environments, playbooks,
certificates) read-only, except for flag reviews, which it appends to the run's reviews.jsonl.
Use `workgym.apps.viewer.app.create_app(path)`; this package's import stays light so
`workgym --help` does not load the web stack.
"""
