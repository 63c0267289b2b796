"""Running policies in environments: policies, the retried attempt, the runner, run directories,
summaries, the Gymnasium facade and executors."""
