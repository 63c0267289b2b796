"""The Ray executor (extra `[ray]`): episodes run on a Ray cluster, the driver writes the run.

Two shapes, because environments come in two kinds:

- **tasks** — one Ray task per episode. Right for environments without per-episode state of
  their own: Ray spreads the episodes over every CPU of the cluster, one at a time per worker.
- **actors** — a pool of async actors, each holding the loaded environment and playing many
  episodes at once on its event loop. Right for stateful environments (a database, a service)
  and for I/O-bound models, where one process can keep many episodes waiting on the network.

`mode="auto"` picks actors when the environment builds per-episode state (overrides `state`).

What travels to the workers: the environment *by reference* (its saved directory, or its
registered id plus the module that registers it), so each worker loads it itself and checks its
content hash against the driver's; and the policy pickled with cloudpickle, where code from
modules that are not installed packages (your script, a test module) goes by value and
installed packages by reference (install them on every node). Results stream back to the
driver, which is the only writer of episodes.jsonl.

A worker that dies mid-episode (killed, OOM) is Ray's to retry (`max_retries` for tasks,
`max_restarts`/`max_task_retries` for actors); the driver records each (task, epoch) once.
When the retries are spent, the episode is recorded as an `error` with the reason, like any
other infrastructure failure, and the run goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib
import math
import pickle
import sys
import sysconfig
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from pydantic import BaseModel

from workgym.core.environment import MANIFEST, Environment
from workgym.core.episode import Episode
from workgym.core.errors import ConfigError
from workgym.core.loading import load, registered_class
from workgym.run.attempt import AttemptSpec, attempt, errored
from workgym.run.executors.executor import Job, OnceRecorder, Record
from workgym.run.policy import Policy

Mode = Literal["auto", "tasks", "actors"]
Settle = Callable[[Exception | None], None]
INSTALL_HINT = "the Ray executor needs the [ray] extra: pip install 'workgym[ray]'"


def _ray() -> Any:
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise ConfigError(f"{INSTALL_HINT} ({exc})") from exc


class EnvRef(BaseModel):
    """How a worker finds the driver's environment: a directory, or a registered id."""

    ref: str
    module: str
    content_hash: str


def env_ref(env: Environment) -> EnvRef:
    """The reference a worker can load `env` from; a clear error when there is none."""
    cls = type(env)
    if env.root is not None and (env.root / MANIFEST).exists():
        ref = str(Path(env.root).resolve())
    elif env.id and registered_class(env.id) is cls:
        ref = env.id
    else:
        raise ConfigError(
            f"Ray workers load the environment themselves, and {cls.__qualname__} is neither a "
            "saved directory nor registered: save it with env.save(DIR) and pass DIR, or "
            "decorate its class with @workgym.register in an importable module"
        )
    if cls.__module__ == "__main__" or "<locals>" in cls.__qualname__:
        raise ConfigError(
            f"{cls.__qualname__} is defined in a script or a function, which Ray workers cannot "
            "import; move the environment class into an importable module"
        )
    return EnvRef(ref=ref, module=cls.__module__, content_hash=env.content_hash())


def _user_modules() -> Iterator[ModuleType]:
    """Loaded modules that are not installed packages (scripts, test modules): shipped by value."""
    skip = tuple(
        p for p in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]} if p
    )
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not file or name == "__main__" or name.partition(".")[0] == "workgym":
            continue
        if "site-packages" in file or "dist-packages" in file or file.startswith(skip):
            continue
        yield module


def pickle_policy(policy: Policy) -> bytes:
    """cloudpickle the policy so that a worker without the driver's sys.path can load it."""
    cloudpickle = _ray().cloudpickle
    registered_here = []
    for module in _user_modules():
        try:
            cloudpickle.register_pickle_by_value(module)
            registered_here.append(module)
        except ValueError:
            continue
    try:
        payload: bytes = cloudpickle.dumps(policy)
    except Exception as exc:
        raise ConfigError(
            f"cannot ship the policy's model {policy.model_name} to Ray workers "
            f"({type(exc).__name__}: {exc}); pass a provider/name model string or a model "
            "object whose class and functions are defined at module level"
        ) from exc
    finally:
        for module in registered_here:
            cloudpickle.unregister_pickle_by_value(module)
    return payload


# -- worker side: per-process caches, so a worker loads each environment and policy once ----------

_ENVS: dict[str, Environment] = {}
_POLICIES: dict[str, Policy] = {}


def _worker_env(ref: EnvRef) -> Environment:
    env = _ENVS.get(ref.content_hash)
    if env is None:
        if not Path(ref.ref).is_absolute():
            importlib.import_module(ref.module)  # registers the environment's id
        # The driver loaded this directory already, under its own trust rule (a registered
        # class, or the user's --trust, which does not reach this process); the hash is checked.
        env = load(ref.ref, trust=True)
        if env.content_hash() != ref.content_hash:
            raise ConfigError(
                f"a Ray worker loaded {ref.ref} with content hash {env.content_hash()[:12]}, "
                f"but the driver's is {ref.content_hash[:12]}; install the same environment "
                "version on every node"
            )
        _ENVS[ref.content_hash] = env
    return env


def _worker_policy(key: str, payload: bytes) -> Policy:
    policy = _POLICIES.get(key)
    if policy is None:
        policy = pickle.loads(payload)
        _POLICIES[key] = policy
    return policy


async def play(
    ref: EnvRef,
    policy_key: str,
    payload: bytes,
    task_id: str,
    epoch: int,
    split: str,
    run_seed: int,
    max_retries: int,
    retry_backoff_s: float,
) -> str:
    """One episode on a worker, through the runner's own attempt logic; returns its JSON line."""
    env = _worker_env(ref)
    policy = _worker_policy(policy_key, payload)
    task = env.taskset[task_id]
    # the same retries and seeds as the asyncio path; the split is always the task's own
    spec = AttemptSpec(
        env=env,
        policy=policy,
        task=task,
        epoch=epoch,
        run_seed=run_seed,
        max_retries=max_retries,
        retry_backoff_s=retry_backoff_s,
    )
    episode = await attempt(spec)
    return episode.model_dump_json()


def play_task(*args: Any) -> str:
    """The Ray task body: a fresh event loop for one episode."""
    return asyncio.run(play(*args))


class EpisodeActor:
    """The Ray actor body: an event loop that plays many episodes concurrently."""

    async def play(self, *args: Any) -> str:
        return await play(*args)

    def ready(self) -> bool:
        return True


# -- driver side ---------------------------------------------------------------------------------


class RayExecutor:
    """Run a job's episodes on Ray; `address=None` joins the initialised Ray or starts one.

    `workers` is the number of episodes running at once in tasks mode and the number of actors
    in actors mode (default: the cluster's CPUs); in actors mode `job.concurrency` episodes are
    spread over them. `worker_retries` bounds how often an episode is re-run after its worker
    died.
    """

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        workers: int | None = None,
        mode: Mode = "auto",
        worker_retries: int = 3,
        init_options: dict[str, Any] | None = None,
    ) -> None:
        if mode not in ("auto", "tasks", "actors"):
            raise ConfigError(f"unknown Ray mode {mode!r}: use auto, tasks or actors")
        if workers is not None and workers < 1:
            raise ConfigError("workers must be at least 1")
        self.address = address
        self.workers = workers
        self.mode: Mode = mode
        self.worker_retries = worker_retries
        self.init_options = dict(init_options or {})
        self.duplicates = 0

    def resolve_mode(self, env: Environment) -> Literal["tasks", "actors"]:
        if self.mode != "auto":
            return self.mode
        stateful = type(env).state is not Environment.state
        return "actors" if stateful else "tasks"

    def _connect(self, ray: Any) -> bool:
        """Join the running Ray, or start/connect one; True when this call initialised it."""
        if ray.is_initialized():
            return False
        options = {"include_dashboard": False, "log_to_driver": True, **self.init_options}
        _probe(self.address)
        try:
            ray.init(address=self.address, **options)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            where = self.address or "a new local cluster"
            raise ConfigError(
                f"cannot reach Ray at {where} ({exc}): start a cluster with `ray start --head` "
                "and pass --address auto (or the address it printed), or omit --address to "
                "start a local one"
            ) from exc
        return True

    async def run(self, job: Job, record: Record) -> None:
        ray = _ray()
        ref = env_ref(job.env)  # fail before starting anything
        payload = pickle_policy(job.policy)
        key = hashlib.sha256(payload).hexdigest()[:16]
        started_here = self._connect(ray)
        once = OnceRecorder(record)
        try:
            cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
            workers = self.workers or cpus
            payload_ref = ray.put(payload)
            common = (ref, key, payload_ref)
            if self.resolve_mode(job.env) == "tasks":
                await self._run_tasks(ray, job, common, workers, once)
            else:
                await self._run_actors(ray, job, common, workers, once)
        finally:
            self.duplicates += once.duplicates
            if started_here:
                ray.shutdown()

    def _args(self, job: Job, common: tuple[Any, ...], task_id: str, epoch: int) -> tuple[Any, ...]:
        return (
            *common,
            task_id,
            epoch,
            job.split,
            job.run_seed,
            job.max_retries,
            job.retry_backoff_s,
        )

    async def _run_tasks(
        self, ray: Any, job: Job, common: tuple[Any, ...], workers: int, once: OnceRecorder
    ) -> None:
        remote = ray.remote(play_task).options(
            num_cpus=1, max_retries=self.worker_retries, retry_exceptions=False
        )

        def submit(task_id: str, epoch: int) -> tuple[Any, Settle]:
            return remote.remote(*self._args(job, common, task_id, epoch)), _nothing

        await self._lanes(ray, job, min(workers, job.concurrency), submit, once)

    async def _run_actors(
        self, ray: Any, job: Job, common: tuple[Any, ...], workers: int, once: OnceRecorder
    ) -> None:
        workers = min(workers, max(1, len(job.todo)))
        per_actor = max(1, math.ceil(job.concurrency / workers))
        actor_cls = ray.remote(EpisodeActor).options(
            num_cpus=1,
            max_restarts=self.worker_retries,
            max_task_retries=self.worker_retries,
            max_concurrency=per_actor,
        )
        actors = [actor_cls.remote() for _ in range(workers)]
        load = [0] * workers
        try:

            def submit(task_id: str, epoch: int) -> tuple[Any, Settle]:
                i = min(range(workers), key=load.__getitem__)  # the least busy actor
                handle = actors[i]
                load[i] += 1

                def settle(lost: Exception | None) -> None:
                    load[i] -= 1
                    if lost is not None and actors[i] is handle:
                        actors[i] = actor_cls.remote()  # restarts spent: a fresh actor takes over

                return handle.play.remote(*self._args(job, common, task_id, epoch)), settle

            await self._lanes(ray, job, per_actor * workers, submit, once)
        finally:
            for actor in actors:
                ray.kill(actor, no_restart=True)

    async def _lanes(self, ray: Any, job: Job, lanes: int, submit: Any, once: OnceRecorder) -> None:
        """`lanes` episodes in flight; each lane submits, awaits, records, and takes the next."""
        items = iter(job.todo)
        pending: set[Any] = set()

        async def lane() -> None:
            for task, epoch in items:
                ref, settle = submit(task.id, epoch)
                pending.add(ref)
                try:
                    episode, lost = await self._result(ray, job, ref, task.id, epoch)
                finally:
                    pending.discard(ref)
                settle(lost)
                once(episode)

        workers = [asyncio.create_task(lane()) for _ in range(min(lanes, len(job.todo)))]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for w in workers:
                w.cancel()
            for ref in list(pending):
                with contextlib.suppress(Exception):  # actor calls cannot be force-cancelled
                    ray.cancel(ref)
            await asyncio.gather(*workers, return_exceptions=True)
            raise

    async def _result(
        self, ray: Any, job: Job, ref: Any, task_id: str, epoch: int
    ) -> tuple[Episode, Exception | None]:
        """The episode a ref resolves to; an `error` episode (and the cause) when it was lost."""
        errors = ray.exceptions
        try:
            text = await asyncio.wrap_future(ref.future())
        except errors.RayTaskError as exc:
            cause = exc.cause  # what the episode code raised (a ConfigError, a fatal ModelError)
            raise (cause if isinstance(cause, Exception) else exc) from None
        except errors.RayError as exc:  # the worker died more often than it may be retried
            return _lost(job, task_id, epoch, self.worker_retries, exc), exc
        return Episode.model_validate_json(text), None


def _probe(address: str | None, timeout_s: float = 5.0) -> None:
    """Fail in seconds, not minutes, when a host:port address has nothing listening
    (ray.init waits a long time for an absent GCS)."""
    import socket

    if not address or "://" in address or address == "auto":
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise ConfigError(
            f"nothing answers at Ray address {address} ({exc}): start a cluster with "
            "`ray start --head` and pass the address it printed, --address auto on a cluster "
            "node, or omit --address to start a local one"
        ) from exc


def _nothing(lost: Exception | None) -> None:
    return None


def _lost(job: Job, task_id: str, epoch: int, retries: int, exc: Exception) -> Episode:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    error = f"ray worker lost {retries + 1} times ({type(exc).__name__}: {first})"
    return errored(job.spec(job.env.taskset[task_id], epoch), error)
