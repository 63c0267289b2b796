"""Weight updates through TRL's GRPOTrainer, fed by real workgym episodes.

- `rollout.WorkgymRollout`: a `rollout_func` that plays whole (multi-turn) episodes with the
  policy being trained and returns token-exact sequences with a model/environment mask.
- `env_factory.tool_environment`: an `environment_factory` for TRL's own tool-calling loop.
- `grpo.train_grpo`: the `workgym train grpo` pipeline (train split only, run directory,
  reward curve, checkpoint).

Nothing here is imported by `import workgym`; torch and trl load only when these modules do.
"""
