"""`workgym/ops-api`: a reference environment whose tools are a real HTTP API with a typed form.

Importing this package registers the environment.
"""

from workgym.envs.ops_api.env import OpsApi

__all__ = ["OpsApi"]
