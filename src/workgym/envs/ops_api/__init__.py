"""`workgym/ops-api`: a reference environment whose tools are a real HTTP API with a typed form.

Importing this package registers the environment.
"""

from workgym.core.missing_extra import require

# The service is a real FastAPI app on uvicorn, called over httpx2 (a lookup, not an import).
require("ops-api", "workgym/ops-api", "httpx2", "fastapi", "uvicorn")

from workgym.envs.ops_api.env import OpsApi  # noqa: E402

__all__ = ["OpsApi"]
