#!/bin/bash
# Interleaved A/B of bench/overhead.py between two checkouts (e.g. a `git worktree` of the old commit
# and this one), 7 rounds, 3,000 episodes each; prints ms of framework time per step at concurrency
# 1 and 64 and the load. Take the medians per side. Usage: PYTHON=$PWD/.venv/bin/python bench/overhead_ab.sh OLD NEW
OLD=${1:?usage: bench/overhead_ab.sh OLD_CHECKOUT NEW_CHECKOUT}; NEW=${2:?usage: bench/overhead_ab.sh OLD_CHECKOUT NEW_CHECKOUT}
for i in 1 2 3 4 5 6 7; do
  for side in old new; do
    if [ $side = old ]; then d=$OLD; else d=$NEW; fi
    out=$(cd $d && PYTHONPATH=$d/src "${PYTHON:-python}" bench/overhead.py --episodes 3000 2>&1)
    c1=$(echo "$out" | grep "concurrency  1" | sed 's/.*, \([0-9.]*\) ms.*/\1/')
    c64=$(echo "$out" | grep "concurrency 64" | sed 's/.*, \([0-9.]*\) ms.*/\1/')
    echo "$side $c1 $c64 load=$(cut -d' ' -f1 /proc/loadavg)"
  done
done
