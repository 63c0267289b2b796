"""Record what real models write, turn by turn, for the call-parsing tests.

Runs a few dev episodes of workgym/lookup and workgym/toy-shop with each model, unforced (no
prefill: what the model writes on its own) and forced (the built-in prefill), and stores every
turn's raw text with the names of the tools offered. tests/models/fixtures/real_replies.json is this
script's output; the expected parse of each reply was then written by hand into that file.

    python bench/record_replies.py --models hf/smollm2-135m,llamacpp/qwen2.5-coder-0.5b \
        --limit 2 --max-turns 3 --out tests/models/fixtures/real_replies.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import workgym as wg
from workgym.core.model import Completion, Sampling


class Recorder:
    """Plays an inner model and keeps each turn's raw text (prefill included)."""

    def __init__(self, inner: Any, label: str) -> None:
        self.inner = inner
        self.name = inner.name
        self.label = label
        self.turns: list[dict[str, Any]] = []

    async def complete(
        self, messages: list[wg.Message], tools: list[Any], sampling: Sampling
    ) -> Completion:
        names = [t.name for t in tools]
        if hasattr(self.inner, "generate") and hasattr(self.inner, "to_completion"):
            result = await self.inner.generate(messages, tools, sampling)
            forced = self.inner.prefill if tools else ""
            text = forced + result["choices"][0].get("text", "")
            completion: Completion = self.inner.to_completion(result, tools)
        else:
            completion = await self.inner.complete(messages, tools, sampling)
            forced_ids = self.inner.prefill_ids if tools else []
            text = self.inner.chat.decode(forced_ids + (completion.completion_token_ids or []))
        self.turns.append({
            "model": self.name, "mode": self.label, "tools": names,
            "turn": sum(1 for m in messages if m.role == "assistant"), "text": text,
        })  # fmt: skip
        return completion


def build(name: str, forced: bool) -> Any:
    if name.startswith("llamacpp/"):
        from workgym.models.llamacpp import AUTO, LlamaCppModel

        return LlamaCppModel(name, slots=2, prefill=AUTO if forced else None)
    from workgym.models.hf import AUTO_PREFILL, HFModel

    return HFModel(name, prefill=AUTO_PREFILL if forced else None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="hf/smollm2-135m,llamacpp/qwen2.5-coder-0.5b")
    parser.add_argument("--envs", default="workgym/lookup,workgym/toy-shop")
    parser.add_argument("--limit", type=int, default=2)
    parser.add_argument("--max-turns", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--temperature", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    records: list[dict[str, Any]] = []
    for name in args.models.split(","):
        for forced in (False, True):
            started = time.perf_counter()
            inner = build(name, forced)
            recorder = Recorder(inner, "forced" if forced else "unforced")
            for env_id in args.envs.split(","):
                env = wg.load(env_id)
                env.limits = env.limits.model_copy(update={"max_turns": args.max_turns})
                out = Path(tempfile.mkdtemp(prefix="record-")) / "run"
                run = wg.eval(env, recorder, split="dev", limit=args.limit, out=out,
                              concurrency=args.limit, progress=False, seed=args.seed,
                              sampling=Sampling(temperature=args.temperature,
                                                max_tokens=args.max_tokens))  # fmt: skip
                for turn in recorder.turns:
                    turn.setdefault("env", env_id)
                won = sum(e.success for e in run.episodes())
                print(f"{name} {recorder.label} {env_id}: {won}/{args.limit} solved", flush=True)
            records.extend(recorder.turns)
            close = getattr(inner, "close", None)
            if close is not None:
                close()
            print(f"{name} {recorder.label}: {time.perf_counter() - started:.0f} s", flush=True)
    args.out.write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(records)} turns -> {args.out}")


if __name__ == "__main__":
    main()
