"""An SFT checkpoint for the imitation-gap study (docs/results.md, issue 20 claim 1).

    PYTHONPATH=src python bench/sft_checkpoint_lookup.py OUT

Trains SmolLM2-135M on workgym/lookup's oracle trajectories of train tasks 28 onwards only, so
the first 28 (what `workgym imitation-gap --limit 28` scores) stay unseen. Prints the losses.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from workgym.envs.lookup.env import Lookup
from workgym.models.hf import HFModel
from workgym.train.sft import SFTSettings, gold_examples, train_sft


def main() -> None:
    env = Lookup()
    tasks = env.taskset.training_view().split("train")[28:]
    examples = asyncio.run(gold_examples(env, tasks, HFModel("hf/smollm2-135m").chat))
    started = time.perf_counter()
    settings = SFTSettings(steps=20, batch_size=4, learning_rate=2e-5, seed=0)
    result = train_sft("hf/smollm2-135m", examples, sys.argv[1], settings)
    print(json.dumps({"examples": result.examples, "losses": result.losses,
                      "checkpoint": str(result.checkpoint),
                      "seconds": round(time.perf_counter() - started, 1)}))  # fmt: skip


if __name__ == "__main__":
    main()
