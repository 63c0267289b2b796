"""Training: turn reward into a better agent, either with frozen weights or by updating them.

Two trainers share this package and the `workgym train` command group (`workgym.apps.cli.train`):

- `workgym.train.playbook`: the weights stay frozen and a short, readable playbook of strategies
  is learned from reward and rendered into the system prompt (docs/playbook.md).
- weight updates through an existing RL trainer (docs/trainers.md).

Both see only the training view of an environment's tasks: the sealed test split is opened by the
certificate, never by a trainer.
"""
