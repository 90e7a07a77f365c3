#!/usr/bin/env bash
# The GPU run of the sweep: check torch sees the GPU, then train the config's grid (gdn/recall/sweep.py).
#   bash gdn/recall/gpu_run.sh CONFIG OUT MINUTES WORKERS
set -euo pipefail
config=$1 out=$2 minutes=$3 workers=$4
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name())"
python -m gdn.recall.sweep --config "$config" --out "$out" --workers "$workers" --minutes "$minutes"
