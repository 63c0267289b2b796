"""The bootstrap learner: a playbook of worked examples from the agent's own verified successes.

No reflector: `examples` renders a train episode the verifier passed (and the audit did not flag)
into one short worked example, `lint` refuses any example that is not from train or carries a dev
or test answer or id, `search` picks which examples go in by a gated search on dev (greedy forward
selection or random subsets), `learner` runs it and writes the playbook, and `config` holds its
settings. The command is `workgym train playbook --learner bootstrap` (decision 0130).
"""
