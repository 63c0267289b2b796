"""The model ladder under both runtimes: load time, memory, tokens/s, share of raw speed.

    PYTHONPATH=src python bench/models.py --models hf/smollm2-135m,llamacpp/smollm2-135m,\
hf/qwen2.5-coder-0.5b,llamacpp/qwen2.5-coder-0.5b --concurrency 1,4,8 --max-tokens 24

Each model runs in a child process of its own, so its load time and peak RSS are its own:

- load: seconds to construct the provider (`hf/`: read the cached de-quantised model, after a
  first run has built the cache; `llamacpp/`: start llama.cpp on the joined GGUF);
- RSS after load and peak RSS of the child;
- for each concurrency C: C toy-shop dev episodes of at most `--max-turns` turns through
  `workgym.eval` (greedy, `--max-tokens` per turn), completion tokens/s of the whole run;
- raw: the runtime alone on the episodes' opening prompts, batch C, exactly `--max-tokens` new
  tokens a row (`hf/`: one left-padded `model.generate`; `llamacpp/`: C concurrent
  completions with end-of-sequence ignored), and the provider's share of that speed.

The box is shared: the script prints the load average with every row; read ratios to a tenth.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import workgym as wg
from workgym.core.environment import Limits
from workgym.core.model import Sampling
from workgym.envs.toy.env import ToyShop


class ShortToyShop(ToyShop):
    """toy-shop cut to `--max-turns` turns, so a bench run stays bounded."""

    id = "bench/toy-shop-short"
    limits = Limits(max_turns=2, max_total_tokens=20_000)


def rss_mb() -> float:
    with open("/proc/self/status", encoding="utf-8") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build(name: str) -> Any:
    if name.startswith("llamacpp/"):
        from workgym.models.llamacpp import LlamaCppModel

        return LlamaCppModel(name, slots=8, context=2048)
    from workgym.models.hf import HFModel

    return HFModel(name)


def openings(model: Any, env: ShortToyShop, n: int) -> list[tuple[list[wg.Message], list[Any]]]:
    tasks = env.taskset.split("dev")
    out = []
    for i in range(n):
        task = tasks[i % len(tasks)]
        out.append((wg.Policy(model).render(env, task), env.toolkit(task).specs))
    return out


def raw_hf(model: Any, env: ShortToyShop, n: int, new_tokens: int) -> float:
    import torch

    prompts = [model.chat.prompt_ids(m, t) + model.prefill_ids for m, t in openings(model, env, n)]
    width = max(len(p) for p in prompts)
    pad = model.tokenizer.pad_token_id or 0
    ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    started = time.perf_counter()
    with torch.no_grad():
        model.model.generate(ids, attention_mask=mask, do_sample=False, pad_token_id=pad,
                             max_new_tokens=new_tokens, min_new_tokens=new_tokens)  # fmt: skip
    return n * new_tokens / (time.perf_counter() - started)


def raw_llamacpp(model: Any, env: ShortToyShop, n: int, new_tokens: int) -> float:
    bodies = []
    for messages, tools in openings(model, env, n):
        body = model.request(model.prompt(messages, tools), Sampling(), new_tokens, [])
        body.update(ignore_eos=True, n_probs=0, cache_prompt=False)  # prefill counts, as in hf
        bodies.append(body)
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=n) as pool:
        results = list(pool.map(model.server.handle_completions, bodies))
    elapsed = time.perf_counter() - started
    tokens = sum(int(r["usage"]["completion_tokens"]) for r in results)
    return tokens / elapsed


def provider_tok_s(model: Any, env: ShortToyShop, n: int, new_tokens: int) -> dict[str, Any]:
    tasks = env.taskset.split("dev")
    limit = min(n, len(tasks))
    out = Path(tempfile.mkdtemp(prefix="bench-models-")) / "run"
    started = time.perf_counter()
    run = wg.eval(env, model, split="dev", limit=limit, epochs=-(-n // limit), concurrency=n,
                  out=out, progress=False,
                  sampling=Sampling(temperature=0.0, max_tokens=new_tokens))  # fmt: skip
    elapsed = time.perf_counter() - started
    episodes = list(run.episodes())
    tokens = sum(e.usage.completion_tokens for e in episodes)
    errors = sum(e.error is not None for e in episodes)
    return {"episodes": len(episodes), "tokens": tokens, "seconds": round(elapsed, 1),
            "tok_s": tokens / elapsed, "errors": errors}  # fmt: skip


def one(name: str, concurrency: list[int], new_tokens: int) -> dict[str, Any]:
    started = time.perf_counter()
    model = build(name)
    load_s = time.perf_counter() - started
    print(json.dumps({"loaded": name, "load_s": round(load_s, 1)}), file=sys.stderr, flush=True)
    row: dict[str, Any] = {"model": name, "load_s": round(load_s, 1),
                           "rss_after_load_mb": round(rss_mb()), "rows": []}  # fmt: skip
    env = ShortToyShop()
    for c in concurrency:
        got = provider_tok_s(model, env, c, new_tokens)
        raw = (raw_llamacpp if name.startswith("llamacpp/") else raw_hf)(model, env, c, new_tokens)
        got.update(concurrency=c, raw_tok_s=round(raw, 2), share=round(got["tok_s"] / raw, 2),
                   tok_s=round(got["tok_s"], 2), load_avg=round(os.getloadavg()[0], 1))  # fmt: skip
        row["rows"].append(got)
        print(json.dumps(got), file=sys.stderr, flush=True)
    row["peak_rss_mb"] = round(peak_rss_mb())
    close = getattr(model, "close", None)
    if close is not None:
        close()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="llamacpp/qwen2.5-coder-0.5b")
    parser.add_argument("--concurrency", default="1,4,8")
    parser.add_argument("--max-tokens", type=int, default=24)
    parser.add_argument("--timeout", type=float, default=900, help="seconds per model")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    if args.one:
        print(json.dumps(one(args.one, levels, args.max_tokens)), flush=True)
        return
    for name in args.models.split(","):
        cmd = [sys.executable, __file__, "--one", name, "--concurrency", args.concurrency,
               "--max-tokens", str(args.max_tokens)]  # fmt: skip
        started = time.perf_counter()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired as out:  # keep the rows it finished
            err = out.stderr.decode() if isinstance(out.stderr, bytes) else out.stderr or ""
            rows = [json.loads(ln) for ln in err.splitlines() if ln.startswith('{"episodes"')]
            ran_out = {"model": name, "ran_out": f"over {args.timeout:.0f} s", "rows": rows}
            print(json.dumps(ran_out), flush=True)
            continue
        lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
        if done.returncode != 0 or not lines:
            print(json.dumps({"model": name, "failed": done.stderr.strip()[-400:]}), flush=True)
            continue
        result = json.loads(lines[-1])
        result["wall_s"] = round(time.perf_counter() - started)
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
