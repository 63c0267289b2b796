#!/usr/bin/env bash
# GPU check of `workgym train grpo` with TRL and a vLLM server: 2 steps, then asserts that the
# weights changed and that every training episode carries per-token logprobs.
#
# For users with one or more NVIDIA GPUs (not run in CI; CPU tests cover the same code paths
# with the local hf/ generator). Needs the [train] extra plus vLLM on the GPU machine:
#
#   pip install torch && pip install 'workgym[train]' 'trl[vllm]'
#   MODEL=/path/to/Qwen2.5-0.5B-Instruct bash bench/gpu_grpo.sh      # a local model directory
#
# Without MODEL it builds the tiny random model (python -m workgym.train.tiny), which is enough
# to check the plumbing. One GPU: the vLLM server and the trainer share it (the server is
# started with a small memory fraction). Two or more: set SERVER_GPU and TRAIN_GPU.
set -euo pipefail

PY=${PY:-python}
OUT=${OUT:-$(mktemp -d -t workgym-gpu-grpo-XXXX)}
PORT=${PORT:-8000}
SERVER_GPU=${SERVER_GPU:-0}
TRAIN_GPU=${TRAIN_GPU:-0}
ENV_REF=${ENV_REF:-workgym/toy-shop}
if [[ -z "${MODEL:-}" ]]; then
  MODEL="$OUT/tiny"
  $PY -m workgym.train.tiny "$MODEL"
fi
echo "model: $MODEL  out: $OUT"

CUDA_VISIBLE_DEVICES=$SERVER_GPU trl vllm-serve --model "$MODEL" --host 127.0.0.1 \
  --port "$PORT" --gpu-memory-utilization 0.3 >"$OUT/vllm.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break
  kill -0 $SERVER 2>/dev/null || { echo "vLLM server died:"; tail -30 "$OUT/vllm.log"; exit 1; }
  sleep 2
done
curl -sf "http://127.0.0.1:$PORT/health" >/dev/null || { echo "vLLM server not up"; exit 1; }

CUDA_VISIBLE_DEVICES=$TRAIN_GPU workgym train grpo "$ENV_REF" --model "hf/$MODEL" \
  --out "$OUT/run" --vllm-url "http://127.0.0.1:$PORT" --steps 2 --num-generations 4 \
  --prompts-per-step 2 --max-new-tokens 64 --learning-rate 1e-5

$PY - "$MODEL" "$OUT/run" <<'PY'
import json
import sys
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM

base, run = sys.argv[1], Path(sys.argv[2])
start = AutoModelForCausalLM.from_pretrained(base)
trained = AutoModelForCausalLM.from_pretrained(run / "checkpoint")
moved = sum(
    not torch.equal(a, b)
    for a, b in zip(start.state_dict().values(), trained.state_dict().values(), strict=True)
)
assert moved > 0, "no weight changed after 2 GRPO steps"
episodes = [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]
assert episodes, "no training episodes recorded"
for ep in episodes:
    turns = ep.get("turn_tokens") or []
    assert turns, f"episode {ep['task_id']} has no token ids"
    for t in turns:
        assert t["logprobs"] and len(t["logprobs"]) == len(t["completion_token_ids"]), ep["task_id"]
curve = [json.loads(line) for line in (run / "reward_curve.jsonl").read_text().splitlines()]
print(f"ok: {moved} tensors changed, {len(episodes)} episodes with logprobs, "
      f"rewards {[c['mean_reward'] for c in curve]}")
PY
