#!/bin/bash
# Claim 2's full run (decision 0194 at issue 36's size; `docs/results.md`, "claim 2 at matched
# new-task accuracy"): seeds 0-4, Qwen2.5-Coder-0.5B through its hf/ weights, 156 ifeval items at
# 512 tokens, 8 KL prompts a dev family. The reduced run's commands with `--scale full`, in order,
# for one GPU (`make install-test` first; about an hour on one H100-class GPU, not yet run):
#
#     bash bench/sft_rl_sweep_full.sh runs/c2f
#
# Every stage resumes (a trained arm or a finished eval is read back), so a killed run is
# restarted with the same command.
set -euo pipefail
out=${1:?usage: bash bench/sft_rl_sweep_full.sh OUT}
sweep() { python bench/sft_rl_sweep.py --scale full "$@"; }
for s in 0 1 2 3 4; do
  [ -f "$out/grpo-s$s/train.json" ] || workgym train grpo bench/lookup-c1 --import bench.lookup_c1 \
    --model hf/qwen2.5-coder-0.5b --out "$out/grpo-s$s" --steps 6 --num-generations 4 \
    --prompts-per-step 4 --micro-batch 2 --learning-rate 2e-5 --temperature 0.6 \
    --max-new-tokens 48 --max-completion-length 512 --seed "$s" --save-every 3
  sweep sft --seed "$s" --out "$out/sft-s$s"
  sweep sft --seed "$s" --control --out "$out/control-s$s"
done
[ -f "$out/eval/base/model.json" ] || sweep eval hf/qwen2.5-coder-0.5b --out "$out/eval/base"
score() { [ -f "$out/eval/$1/model.json" ] || sweep eval "hf/$2" --out "$out/eval/$1"; }
for s in 0 1 2 3 4; do
  score "grpo-s$s-3" "$out/grpo-s$s/steps/step-0003"
  score "grpo-s$s-6" "$out/grpo-s$s/checkpoint"
  for k in 1 2 4; do score "sft-s$s-$k" "$out/sft-s$s/steps/step-000$k"; done
  score "sft-s$s-8" "$out/sft-s$s/checkpoint"
  score "control-s$s-8" "$out/control-s$s/checkpoint"
done
sweep report "$out/eval" --out "$out/report"
