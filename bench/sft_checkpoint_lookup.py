"""An SFT checkpoint for the imitation-gap study (docs/results.md, issue 20 and 36 claim 1).

    PYTHONPATH=src python bench/sft_checkpoint_lookup.py OUT
    PYTHONPATH=src python bench/sft_checkpoint_lookup.py OUT --held-out-dev

By default it trains SmolLM2-135M on workgym/lookup's oracle trajectories of train tasks 28
onwards only, so the first 28 (what `workgym imitation-gap --limit 28` scores) stay unseen.
With `--held-out-dev` it trains on every train task of `bench/lookup-c1` instead, whose dev
split holds five whole families (decision 0179), so the dev families stay unseen. Prints the
losses.
"""

from __future__ import annotations

import argparse

from _common import sft_checkpoint  # bench/ is the script's own directory
from workgym.envs.lookup.env import Lookup


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="where the checkpoint goes")
    parser.add_argument(
        "--held-out-dev",
        action="store_true",
        help="train on bench/lookup-c1's whole train split (its five dev families unseen)",
    )
    args = parser.parse_args()
    if args.held_out_dev:
        from lookup_c1 import LookupC1  # bench/ is the script's own directory

        env: Lookup = LookupC1()
        tasks = env.taskset.training_view().split("train")
    else:
        env = Lookup()
        tasks = env.taskset.training_view().split("train")[28:]
    sft_checkpoint(env, tasks, args.out)


if __name__ == "__main__":
    main()
