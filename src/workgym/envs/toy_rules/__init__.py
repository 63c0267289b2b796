"""Toy rules: an environment whose tasks reward a learnable house rule (playbook tests)."""
