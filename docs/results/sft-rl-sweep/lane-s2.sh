#!/bin/bash
# decision 0194, amendment 3: the third seed (S = 2) the decision first asked for, run after the
# two-seed reading was published. Lane A trains GRPO and then evaluates in the decision's order;
# lane B trains the SFT and control arms, then evaluates from the other end. A checkpoint is
# claimed by mkdir (atomic), as in lane.sh.
cd /work/main
export WORKGYM_TORCH_THREADS=1 OMP_NUM_THREADS=1
ev() {  # name model-dir done-marker
  while [ ! -f "$3" ]; do sleep 10; done
  mkdir runs/c2s/eval/$1.claim 2>/dev/null || return 0
  echo "$(date +%T) eval $1"
  .venv/bin/python bench/sft_rl_sweep.py eval hf/$2 --out runs/c2s/eval/$1 > runs/c2s/eval/$1.log 2>&1
  echo "$(date +%T) done $1 rc=$? $(tail -n 1 runs/c2s/eval/$1.log | cut -c1-160)"
}
g() { d=runs/c2s/grpo-s$1/steps/step-000$2; [ $2 = 6 ] && d=runs/c2s/grpo-s$1/checkpoint
      ev grpo-s$1-$2 $d runs/c2s/grpo-s$1/train.json; }
s() { d=runs/c2s/sft-s$1/steps/step-000$2; [ $2 = 8 ] && d=runs/c2s/sft-s$1/checkpoint
      ev sft-s$1-$2 $d runs/c2s/sft-s$1/sft.json; }
c() { ev control-s$1-8 runs/c2s/control-s$1/checkpoint runs/c2s/control-s$1/sft.json; }
if [ "$1" = A ]; then
  echo "$(date +%T) train grpo s2"
  .venv/bin/workgym train grpo bench/lookup-c1 --import bench.lookup_c1 --model hf/smollm2-135m \
    --out runs/c2s/grpo-s2 --steps 6 --num-generations 4 --prompts-per-step 4 --micro-batch 2 \
    --learning-rate 2e-5 --temperature 0.6 --max-new-tokens 48 --max-completion-length 512 \
    --seed 2 --save-every 3 > runs/c2s/grpo-s2.log 2>&1
  echo "$(date +%T) trained grpo s2 rc=$?"
  g 2 6; g 2 3; s 2 1; s 2 2; s 2 4; s 2 8; c 2
else
  for arm in sft control; do
    flag=""; [ $arm = control ] && flag=--control
    echo "$(date +%T) train $arm s2"
    .venv/bin/python bench/sft_rl_sweep.py sft --seed 2 $flag --out runs/c2s/$arm-s2 > runs/c2s/$arm-s2.log 2>&1
    echo "$(date +%T) trained $arm s2 rc=$?"
  done
  c 2; s 2 8; s 2 4; s 2 2; s 2 1; g 2 6; g 2 3
fi
echo "$(date +%T) lane $1 finished"
