"""Finding an environment: by registered id, or by a directory that `Environment.save` wrote.

Ids come from the registry (`ENVIRONMENTS`): the `workgym.environments` entry-point group of
every installed distribution (workgym's own pyproject.toml declares the built-ins; a user's
package declares its own the same way) and classes decorated with `@register` in this process
(a module passed to `--import`). A directory's manifest names the class that saved it
(`entry`); `environment_class` is the one place that imports it, and `is_trusted` says whether
the registry vouches for it.

Directories travel: people open run folders and environments they were sent, so a manifest is
data, and data must never choose what code runs (a manifest with `entry: "os:system"` once ran a
shell command when the viewer opened an episode). `load_dir` imports an entry only when
`is_trusted` holds: the class of a registered environment, a class that only exists as generated
directories (`SAVED_ENVIRONMENTS`, the `workgym.saved_environments` entry-point group: workgym
declares its warehouse there, a package its own), a class of a module the user passed to
`--import`, or any class when the user typed `--trust` (or passed `trust=True`). The content
hash is then checked by that class.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from workgym.core.environment import MANIFEST, MANIFEST_FORMAT, Environment
from workgym.core.errors import ConfigError
from workgym.core.registry import Registry
from workgym.core.tasks import warn_empty_splits

IMPORT_HINT = (
    "install the package that defines it, put its folder on PYTHONPATH, "
    "or pass --import MODULE (the module that defines or registers it)"
)

ENVIRONMENTS: Registry[Callable[[], Environment]] = Registry(
    "environment",
    "workgym.environments",
    hint="`workgym envs` lists them; pass a directory made by `workgym generate` or "
    "Environment.save(), or --import the module that registers yours",
)

E = TypeVar("E", bound=type[Environment])

SAVED_ENVIRONMENTS: Registry[type[Environment]] = Registry(
    "saved-only environment class",
    "workgym.saved_environments",
    hint="declare a class whose instances are only saved directories in the "
    "`workgym.saved_environments` entry-point group of its package",
)
"""Environment classes with no registered id because every instance is a generated directory;
trusted like registered ones, and never imported to decide it (their entry points' values are
compared with a manifest's `entry`)."""
_user_trusts = False
_user_modules: set[str] = set()


def set_user_trust(trusted: bool) -> None:
    """Record the user's `--trust` for this process (the CLI's root option sets it each run)."""
    global _user_trusts
    _user_trusts = trusted


def reset_user_trust() -> None:
    """Forget `--trust` and every `--import`: one process that runs several commands (a test
    session, a notebook) must not let one command's trust carry into the next."""
    set_user_trust(False)
    _user_modules.clear()


def trust_module(name: str) -> None:
    """Classes of module `name` may be imported from manifests: the user named it (`--import`)."""
    _user_modules.add(name)


def entry_of(cls: type[Environment]) -> str:
    """`module:qualname`, the form of a manifest's `entry` and of an entry point's value."""
    return f"{cls.__module__}:{cls.__qualname__}"


def register(cls: E) -> E:
    """Class decorator: make an environment loadable by its `id` in this process."""
    if not cls.id:
        raise TypeError(f"{cls.__name__} needs a non-empty `id` to be registered")
    ENVIRONMENTS.add(cls.id, cls, source=entry_of(cls))
    return cls


def build(env_id: str) -> Environment:
    """A fresh environment of a registered id (its class, or factory, called with no root)."""
    env = ENVIRONMENTS.load(env_id)()
    if not isinstance(env, Environment):
        raise ConfigError(
            f"environment {env_id!r} is registered as {type(env).__name__}, not an "
            "Environment: point its entry point at the Environment subclass"
        )
    return env


def registered() -> dict[str, Callable[[], Environment]]:
    """Every registered id with a factory that builds it; nothing is imported until one is
    called (`workgym envs` must not import FastAPI, and a suite whose extra is missing must not
    break the rest)."""
    return {name: partial(build, name) for name in ENVIRONMENTS.names()}


def registered_class(env_id: str) -> type[Environment] | None:
    """The class registered as `env_id` (imported), or None when the id names none."""
    entry = ENVIRONMENTS.get(env_id)
    obj = entry.load() if entry is not None else None
    return obj if isinstance(obj, type) and issubclass(obj, Environment) else None


def is_trusted(entry: str) -> bool:
    """Whether a manifest's `entry` may be imported: a class the registry knows (an installed
    entry point or a class registered in this process), a saved-only class
    (`SAVED_ENVIRONMENTS`), a class of a module the user passed to `--import`, or anything once
    the user typed `--trust`. The rule lives here; `load_dir` applies it before any import."""
    if _user_trusts or entry.partition(":")[0] in _user_modules:
        return True
    return entry in ENVIRONMENTS.sources() or entry in SAVED_ENVIRONMENTS.sources()


def load(ref: str | Path, *, trust: bool = False) -> Environment:
    """An environment from a saved directory or a registered id; `trust=True` imports a
    directory's class even when no registry vouches for it (only for directories you wrote)."""
    path = Path(ref)
    if (path / MANIFEST).exists():
        return load_dir(path, trust=trust)
    if path.exists():
        raise ConfigError(
            f"{path} is not an environment directory (no {MANIFEST}); "
            "make one with `workgym generate ...` or Environment.save()"
        )
    return build(str(ref))


def environment_class(entry: str, path: Path) -> type[Environment]:
    """Import the class a saved directory names; the hint says how to make it importable."""
    module_name, _, qualname = entry.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"{path}: cannot import its environment class {entry!r} ({exc}); {IMPORT_HINT}"
        ) from exc
    except AttributeError as exc:
        raise ConfigError(
            f"{path}: cannot import its environment class {entry!r} ({exc}); {IMPORT_HINT}"
        ) from exc
    except ConfigError:
        raise
    except Exception as exc:  # the module is there but wrong: where, in one line
        from workgym.core.user_code import describe

        raise ConfigError(f"{path}: importing {module_name}: {describe(exc)}") from exc
    if not (isinstance(obj, type) and issubclass(obj, Environment)):
        raise ConfigError(f"{path}: its manifest's entry {entry!r} is not an Environment class")
    return obj


def load_dir(path: Path, *, trust: bool = False) -> Environment:
    """The environment saved in `path`, checked against its manifest's content hash; its class
    is imported only when `is_trusted` (or `trust`) says so."""
    try:
        manifest = json.loads((path / MANIFEST).read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path / MANIFEST} is not valid JSON ({exc}); re-save it") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else manifest
        raise ConfigError(f"{path} has format {found!r}; this workgym reads {MANIFEST_FORMAT}")
    entry = str(manifest.get("entry", ""))
    if not (trust or is_trusted(entry)):
        raise ConfigError(
            f"{path}: its manifest names code {entry!r}, which is not an installed, registered "
            f"environment, so it was not imported; {IMPORT_HINT}, or pass --trust if you wrote "
            "this directory yourself"
        )
    env = environment_class(entry, path)(path)
    saved = env.saved_tasks()
    if saved is not None and type(env).tasks is not Environment.tasks:
        env.taskset = saved  # what the hash covers, not what tasks() would build today
        warn_empty_splits(env.id or type(env).__name__, saved)  # as Environment.taskset does
    if env.content_hash() != manifest.get("content_hash"):
        raise ConfigError(
            f"{path} changed after it was saved (content hash {env.content_hash()[:12]} != "
            f"manifest {str(manifest.get('content_hash'))[:12]}); re-generate or re-save it"
        )
    return env
