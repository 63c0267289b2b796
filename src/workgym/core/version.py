"""The package version, in the core so that run folders and certificates can stamp it.

Modules below the public face read it from here; `workgym.__version__` re-exports it.
"""

__version__ = "0.1.0"
