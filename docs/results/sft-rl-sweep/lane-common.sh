# Shared by lane.sh and lane-s2.sh (decision 0194): one eval per checkpoint, claimed by mkdir
# (atomic) so two lanes never score the same one; g/s/c name a GRPO, SFT or control checkpoint.
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
train() {  # arm seed: an SFT arm, or the control (`control`)
  flag=""; [ $1 = control ] && flag=--control
  echo "$(date +%T) train $1 s$2"
  .venv/bin/python bench/sft_rl_sweep.py sft --seed $2 $flag --out runs/c2s/$1-s$2 > runs/c2s/$1-s$2.log 2>&1
  echo "$(date +%T) trained $1 s$2 rc=$?"
}
