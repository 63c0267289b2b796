"""Test doubles that stand in for things outside the process (model servers), named as such."""
