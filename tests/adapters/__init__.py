"""Tests of workgym.adapters; a package so its conftest is `adapters.conftest`, not `conftest`."""
