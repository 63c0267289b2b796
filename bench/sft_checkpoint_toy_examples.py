"""An SFT checkpoint for claim 1 on toy-examples (decision 0199): trained where it is not scored.

    PYTHONPATH=src python bench/sft_checkpoint_toy_examples.py OUT [--save-at 1 2 4]

Fine-tunes SmolLM2-135M on the oracle trajectories (transform, then submit) of the 24 train tasks
of `bench/toy-examples-c1t`, fresh words that `bench/toy-examples-c1` (where claim 1 scores it)
does not hold, with the lookup SFT checkpoint's settings (20 steps of 4, lr 2e-5, seed 0). Prints
the losses; the checkpoint loads as `hf/OUT/checkpoint`, and with `--save-at` the model after
each of those steps as `hf/OUT/steps/step-NNNN` (one run: the schedule is constant).
"""

from __future__ import annotations

import argparse

from _common import sft_checkpoint  # bench/ is the script's own directory
from toy_examples_c1 import ToyExamplesC1Train


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="where the checkpoint goes")
    parser.add_argument("--save-at", type=int, nargs="*", default=[], help="also save these steps")
    args = parser.parse_args()
    env = ToyExamplesC1Train()
    tasks = env.taskset.training_view().split("train")
    sft_checkpoint(env, tasks, args.out, args.save_at)


if __name__ == "__main__":
    main()
