"""Train the tiny model of notebook 10 and store its checkpoint as package data.

    python -m scripts.train_tiny_model            # writes attention_helpers/data/tiny_model.npz

The file holds, for the model trained with attention_helpers.tiny_model.TRAINING:
"loss", "grad_norm_Q", "grad_norm_K" (one per step), "snapshot_steps" and each weight matrix at
those steps ("W_E", ... with the snapshot first); and for the √d_k experiment (SQRT_EXPERIMENT):
"sqrt_loss", "sqrt_grad_norm_Q", "sqrt_grad_norm_K", each [2, seeds, steps] with index 0 =
divided by √d_k, 1 = not divided, and "sqrt_seeds", "sqrt_d_head". Everything is seeded, so a
rerun reproduces it to rounding, except the runs not divided by √d_k: their saturated softmax
amplifies rounding, and on another CPU they part after a dozen steps (tests/test_tiny_model.py
says what is checked of each).
"""

from __future__ import annotations

import argparse
import os
import time

# The matrices are tiny: a second BLAS thread only waits for the first (on a busy 2-core machine the
# training ran about 5 times slower with 2 threads than with 1). Set before NumPy loads; the result
# is the same either way (tests/test_tiny_model.py).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402 (after the thread setting)

from attention_helpers import tiny_model as tm  # noqa: E402


def make_checkpoint() -> dict:
    arrays = tm.train(**tm.TRAINING)
    exp = tm.SQRT_EXPERIMENT
    runs = [[tm.train(seed, steps=exp["steps"], d_head=exp["d_head"], scaled=scaled)
             for seed in exp["seeds"]] for scaled in (True, False)]
    for key in ("loss", "grad_norm_Q", "grad_norm_K"):
        arrays[f"sqrt_{key}"] = np.array([[run[key] for run in row] for row in runs])
    arrays["sqrt_seeds"] = np.array(exp["seeds"])
    arrays["sqrt_d_head"] = np.array(exp["d_head"])
    return arrays


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=tm.CHECKPOINT, help="where to write the .npz")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    path = tm.save_checkpoint(make_checkpoint(), args.out)
    print(f"wrote {path.name} ({path.stat().st_size / 1024:.0f} KiB) in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
