#!/bin/bash
# decision 0194 (amended): lane A evaluates in the decision's order; lane B trains the SFT and
# control arms, then evaluates from the other end. A checkpoint is claimed by mkdir (atomic).
source "$(dirname "$0")/lane-common.sh"
if [ "$1" = A ]; then
  while [ ! -f runs/c2s/eval/base/model.json ]; do sleep 10; done
  g 0 6; g 0 3; s 0 1; s 0 2; s 0 4; s 0 8; g 1 3; g 1 6; s 1 1; s 1 2; s 1 4; s 1 8; c 0; c 1
else
  while [ ! -f runs/c2s/grpo-s0/train.json ] || [ ! -f runs/c2s/grpo-s1/train.json ]; do sleep 10; done
  train sft 0; train sft 1; train control 0; train control 1
  c 1; c 0; s 1 8; s 1 4; s 1 2; s 1 1; g 1 6; g 1 3; s 0 8; s 0 4; s 0 2; s 0 1; g 0 6; g 0 3
fi
echo "$(date +%T) lane $1 finished"
