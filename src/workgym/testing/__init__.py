"""Test doubles, named as such (`scripted/...`): scripted models and the oracle, for self-checks."""
