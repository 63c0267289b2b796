#!/bin/bash
# decision 0194 (amended): lane A evaluates in the decision's order; lane B trains the SFT and
# control arms, then evaluates from the other end. A checkpoint is claimed by mkdir (atomic).
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
train() {
  flag=""; [ $1 = control ] && flag=--control
  echo "$(date +%T) train $1 s$2"
  .venv/bin/python bench/sft_rl_sweep.py sft --seed $2 $flag --out runs/c2s/$1-s$2 > runs/c2s/$1-s$2.log 2>&1
  echo "$(date +%T) trained $1 s$2 rc=$?"
}
if [ "$1" = A ]; then
  while [ ! -f runs/c2s/eval/base/model.json ]; do sleep 10; done
  g 0 6; g 0 3; s 0 1; s 0 2; s 0 4; s 0 8; g 1 3; g 1 6; s 1 1; s 1 2; s 1 4; s 1 8; c 0; c 1
else
  while [ ! -f runs/c2s/grpo-s0/train.json ] || [ ! -f runs/c2s/grpo-s1/train.json ]; do sleep 10; done
  train sft 0; train sft 1; train control 0; train control 1
  c 1; c 0; s 1 8; s 1 4; s 1 2; s 1 1; g 1 6; g 1 3; s 0 8; s 0 4; s 0 2; s 0 1; g 0 6; g 0 3
fi
echo "$(date +%T) lane $1 finished"
