#!/bin/bash
# decision 0194, amendment 3: the third seed (S = 2) the decision first asked for, run after the
# two-seed reading was published. Lane A trains GRPO and then evaluates in the decision's order;
# lane B trains the SFT and control arms, then evaluates from the other end. A checkpoint is
# claimed by mkdir (atomic), as in lane.sh.
source "$(dirname "$0")/lane-common.sh"
if [ "$1" = A ]; then
  echo "$(date +%T) train grpo s2"
  .venv/bin/workgym train grpo bench/lookup-c1 --import bench.lookup_c1 --model hf/smollm2-135m \
    --out runs/c2s/grpo-s2 --steps 6 --num-generations 4 --prompts-per-step 4 --micro-batch 2 \
    --learning-rate 2e-5 --temperature 0.6 --max-new-tokens 48 --max-completion-length 512 \
    --seed 2 --save-every 3 > runs/c2s/grpo-s2.log 2>&1
  echo "$(date +%T) trained grpo s2 rc=$?"
  g 2 6; g 2 3; s 2 1; s 2 2; s 2 4; s 2 8; c 2
else
  train sft 2; train control 2
  c 2; s 2 8; s 2 4; s 2 2; s 2 1; g 2 6; g 2 3
fi
echo "$(date +%T) lane $1 finished"
