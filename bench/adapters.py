"""What the ecosystem adapters cost: per-step overhead of each, and the two OpenEnv servers.

1. Per step, in process, no model and no network: the same scripted three-turn toy-shop episode
   (two lookups, then the answer) played through the bare `EpisodeDriver` and through each
   adapter's own step path: Gymnasium `WorkgymEnv.step` (JSON text in and out), verifiers'
   `env_response` (+ setup and the verdict reward), Inspect's message conversion around the
   driver, and OpenEnv's `WorkgymOpenEnv.step_async`. The overhead is the difference with the
   bare driver, per step.
2. OpenEnv's protocol over a real socket, driven by OpenEnv's own `EnvClient`: workgym's server
   (`workgym serve --protocol openenv`) beside OpenEnv's own server (`create_app` around
   `WorkgymOpenEnv`), each in its own process on 127.0.0.1, on the same workload: ms/step with
   one client (c=1), episodes/s with 64 clients (c=64).

Needs the adapters' venv (`make install-adapters`). Prints numbers; asserts nothing.

    .venv-adapters/bin/python bench/adapters.py [--episodes 300] [--server-episodes 640]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent))  # for _common when loaded by path
from _common import three_turns
from workgym.adapters.episodes import open_episode
from workgym.core.messages import Message
from workgym.core.model import Completion
from workgym.envs.toy.env import ToyShop
from workgym.run.finish import finish_episode

STEPS = 3
ENV = ToyShop()
TASKS = list(ENV.taskset.training_view().split("train"))


def wire(message: Message) -> dict[str, Any]:
    return message.to_openai()


async def bare(task_index: int) -> None:
    task = TASKS[task_index % len(TASKS)]
    driver = open_episode(ENV, task, "bench/bare")
    for turn in three_turns(task, ENV):
        await driver.step(Completion(message=turn))
    await finish_episode(driver)


def gymnasium_player() -> Callable[[int], None]:
    from workgym.adapters.gym_adapter import WorkgymEnv

    gym_env = WorkgymEnv(ENV)

    def play(i: int) -> None:  # Gymnasium's API is synchronous
        task = TASKS[i % len(TASKS)]
        gym_env.reset(seed=i, options={"task_id": task.id})
        for turn in three_turns(task, ENV):
            gym_env.step(json.dumps(wire(turn)))

    return play


def verifiers_player() -> Callable[[int], Awaitable[None]]:
    import verifiers as vf
    from workgym.adapters.verifiers_adapter import WorkgymVerifiersEnv

    vf_env = WorkgymVerifiersEnv(ENV)

    async def play(i: int) -> None:
        task = TASKS[i % len(TASKS)]
        state: dict[str, Any] = {"info": {"task_id": task.id}, "trajectory_id": str(i)}
        state["model"] = "bench"
        await vf_env.setup_state(state)
        messages: list[Any] = []
        for turn in three_turns(task, ENV):
            calls = [
                vf.ToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in turn.tool_calls
            ]
            messages.append(vf.AssistantMessage(content="", tool_calls=calls))
            messages.extend(await vf_env.env_response(messages, state))
        await vf_env.workgym_reward(state)

    return play


def inspect_player() -> Callable[[int], Awaitable[None]]:
    from inspect_ai.model import ChatMessageAssistant
    from inspect_ai.tool import ToolCall

    from workgym.adapters.inspect_adapter import to_inspect, to_workgym

    async def play(i: int) -> None:
        task = TASKS[i % len(TASKS)]
        driver = open_episode(ENV, task, "inspect/bench")
        transcript = [to_inspect(m) for m in driver.messages]
        for turn in three_turns(task, ENV):
            calls = [
                ToolCall(id=c.id, function=c.name, arguments=json.loads(c.arguments))
                for c in turn.tool_calls
            ]
            reply = ChatMessageAssistant(content="", tool_calls=calls)
            transcript.append(reply)
            replies = await driver.step(Completion(message=to_workgym(reply)))
            transcript.extend(to_inspect(m) for m in replies)
        await finish_episode(driver)

    return play


def openenv_player() -> Callable[[int], Awaitable[None]]:
    from workgym.adapters.openenv_adapter import ChatAction, WorkgymOpenEnv

    open_env = WorkgymOpenEnv(ENV)

    async def play(i: int) -> None:
        task = TASKS[i % len(TASKS)]
        open_env.reset(task_id=task.id)
        for turn in three_turns(task, ENV):
            data = wire(turn)
            await open_env.step_async(ChatAction(content="", tool_calls=data["tool_calls"]))

    return play


def per_step(episodes: int) -> None:
    async def timed_async(play: Callable[[int], Awaitable[None]]) -> float:
        for i in range(20):  # warm up
            await play(i)
        started = time.perf_counter()
        for i in range(episodes):
            await play(i)
        return 1000 * (time.perf_counter() - started) / (episodes * STEPS)

    def timed_sync(play: Callable[[int], None]) -> float:
        for i in range(20):
            play(i)
        started = time.perf_counter()
        for i in range(episodes):
            play(i)
        return 1000 * (time.perf_counter() - started) / (episodes * STEPS)

    def timed(play: Any) -> float:
        """The best of three runs: the least disturbed by other load on the machine."""
        if asyncio.iscoroutinefunction(play):
            return min(asyncio.run(timed_async(play)) for _ in range(3))
        return min(timed_sync(play) for _ in range(3))

    base = timed(bare)
    print(f"per step, in process ({episodes} episodes x {STEPS} steps, toy-shop, best of 3)")
    print(f"  {'path':<28} {'ms/step':>8} {'overhead ms/step':>17}")
    print(f"  {'EpisodeDriver (bare)':<28} {base:8.3f} {'-':>17}")
    players: dict[str, Callable[[], Any]] = {
        "gymnasium WorkgymEnv": gymnasium_player,
        "verifiers env_response": verifiers_player,
        "inspect solver conversions": inspect_player,
        "openenv WorkgymOpenEnv": openenv_player,
    }
    for name, make in players.items():
        ms = timed(make())
        print(f"  {name:<28} {ms:8.3f} {ms - base:17.3f}")


SERVERS = {
    "workgym serve --protocol openenv": (
        "from workgym.apps.serve.server import serve; from workgym.envs.toy.env import ToyShop; "
        "serve(ToyShop(), port={port}, token='t', protocol='openenv')"
    ),
    "OpenEnv create_app(WorkgymOpenEnv)": (
        "import uvicorn; from workgym.adapters.openenv_adapter import openenv_app; "
        "uvicorn.run(openenv_app('workgym/toy-shop'), host='127.0.0.1', port={port}, "
        "log_level='warning')"
    ),
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def client_episodes(url: str, first: int, count: int) -> None:
    from workgym.adapters.openenv_adapter import ChatAction, WorkgymEnvClient

    async with WorkgymEnvClient(base_url=url) as client:
        for i in range(first, first + count):
            task = TASKS[i % len(TASKS)]
            await client.reset(task_id=task.id)
            for turn in three_turns(task, ENV):
                tool_calls = wire(turn)["tool_calls"]
                result = await client.step(ChatAction(content="", tool_calls=tool_calls))
            assert result.done and result.reward == 1.0, "the bench script solves every task"


async def concurrent_clients(url: str, clients: int, per_client: int) -> None:
    await asyncio.gather(
        *(client_episodes(url, k * per_client, per_client) for k in range(clients))
    )


def wait_ready(port: int, process: subprocess.Popen[bytes]) -> None:
    for _ in range(600):
        if process.poll() is not None:
            raise SystemExit(f"the server exited with {process.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise SystemExit("the server did not come up in 30 s")


def servers(episodes: int) -> None:
    print(f"\nOpenEnv protocol over 127.0.0.1, OpenEnv's EnvClient, {STEPS}-step episodes")
    print(f"  {'server':<36} {'c=1 ms/step':>12} {'c=64 episodes/s':>16}")
    for name, code in SERVERS.items():
        port = free_port()
        process = subprocess.Popen([sys.executable, "-c", code.format(port=port)])
        try:
            wait_ready(port, process)
            url = f"http://127.0.0.1:{port}"
            asyncio.run(client_episodes(url, 0, 10))  # warm up
            single = max(50, episodes // 8)
            started = time.perf_counter()
            asyncio.run(client_episodes(url, 0, single))
            ms_step = 1000 * (time.perf_counter() - started) / (single * STEPS)
            per_client = -(-episodes // 64)

            started = time.perf_counter()
            asyncio.run(concurrent_clients(url, 64, per_client))
            rate = 64 * per_client / (time.perf_counter() - started)
            print(f"  {name:<36} {ms_step:12.2f} {rate:16.1f}")
        finally:
            process.terminate()
            process.wait(timeout=20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=300, help="in-process, per path")
    parser.add_argument("--server-episodes", type=int, default=640, help="per server at c=64")
    args = parser.parse_args()
    per_step(args.episodes)
    servers(args.server_episodes)


if __name__ == "__main__":
    main()
