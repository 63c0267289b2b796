"""What a person runs: the `workgym` command, the viewer, the environment server and the demo."""
