"""`workgym/docstore`: a reference environment for root-cause investigation over documents.

Importing this package registers the environment.
"""

from workgym.envs.docstore.env import DocStore

__all__ = ["DocStore"]
