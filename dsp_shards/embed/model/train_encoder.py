#!/usr/bin/python3
"""Trains the pulse encoder the embed shard ships with, and exports it with TorchScript.

Simulates detector pulses of four shape classes (fast exponential, slow exponential, Gaussian,
pile-up of two fast pulses) with random amplitude, arrival jitter and baseline noise; trains a
tiny 1-D convolutional encoder (256 samples in, DIMS L2-normalised floats out) with a
classification head used only for training; then measures, on fresh pulses, how often a pulse's
nearest neighbour by cosine (leave-one-out) has its class. Writes OUT.pt (the encoder alone) and
OUT.json (input length, dims, normalisation, classes, the measured accuracy). Deterministic: a
fixed seed, one thread. Exits 1 when the accuracy is below --min-accuracy.

usage: train_encoder.py OUT_PREFIX [--dims 32] [--min-accuracy 0.9]

The simulation is mirrored in C++ by tests/embed/pulse_sim.hpp: change both together.
"""
import argparse
import json
import sys
import time

import torch
import torch.nn.functional as F

LENGTH = 256          # samples per window (the trigger's pre + post)
PRE = 64              # samples before the pulse's arrival
JITTER = 8            # arrival: PRE +- JITTER samples
CLASSES = ["fast_exp", "slow_exp", "gaussian", "pileup"]
SEED = 20261204
TRAIN_PER_CLASS = 1500
TEST_PER_CLASS = 250
EPOCHS = 12
BATCH = 64
NOISE = 0.1           # baseline noise (sigma); amplitudes are 1 to 10


def simulate(cls, n, gen):
    """n windows of class cls: amplitude 1..10, arrival PRE +- JITTER, Gaussian baseline noise."""
    t = torch.arange(LENGTH, dtype=torch.float32).unsqueeze(0)
    u = lambda lo, hi: lo + (hi - lo) * torch.rand(n, 1, generator=gen)
    amp = u(1.0, 10.0)
    t0 = PRE + torch.randint(-JITTER, JITTER + 1, (n, 1), generator=gen).float()
    dt = t - t0
    on = (dt >= 0).float()
    if cls == 0:    # fast exponential: rise 1-2, decay 4-10 samples
        rise, tau = u(1.0, 2.0), u(4.0, 10.0)
        shape = on * (torch.exp(-dt.clamp(min=0) / tau) - torch.exp(-dt.clamp(min=0) / rise))
    elif cls == 1:  # slow exponential: rise 2-4, decay 30-60 samples
        rise, tau = u(2.0, 4.0), u(30.0, 60.0)
        shape = on * (torch.exp(-dt.clamp(min=0) / tau) - torch.exp(-dt.clamp(min=0) / rise))
    elif cls == 2:  # Gaussian: sigma 4-10 samples, centred at the arrival
        sigma = u(4.0, 10.0)
        shape = torch.exp(-0.5 * (dt / sigma) ** 2)
    else:           # pile-up: two fast pulses 20-80 samples apart, the second 0.5-1 of the first
        rise, tau = u(1.0, 2.0), u(4.0, 10.0)
        gap, frac = u(20.0, 80.0), u(0.5, 1.0)
        d2 = dt - gap
        on2 = (d2 >= 0).float()
        shape = on * (torch.exp(-dt.clamp(min=0) / tau) - torch.exp(-dt.clamp(min=0) / rise)) + \
            frac * on2 * (torch.exp(-d2.clamp(min=0) / tau) - torch.exp(-d2.clamp(min=0) / rise))
    peak = shape.abs().amax(dim=1, keepdim=True).clamp(min=1e-6)
    return amp * shape / peak + NOISE * torch.randn(n, LENGTH, generator=gen)


def dataset(per_class, gen):
    x = torch.cat([simulate(c, per_class, gen) for c in range(len(CLASSES))])
    y = torch.cat([torch.full((per_class,), c, dtype=torch.long) for c in range(len(CLASSES))])
    return x, y


def standardise(x):
    """Per-window standardisation, as the shard's normalisation=standardise does."""
    mean = x.mean(dim=1, keepdim=True)
    std = x.std(dim=1, unbiased=False, keepdim=True).clamp(min=1e-6)
    return (x - mean) / std


class Encoder(torch.nn.Module):
    """[batch, 256] standardised windows -> [batch, dims] unit vectors."""

    def __init__(self, dims: int):
        super().__init__()
        self.conv1 = torch.nn.Conv1d(1, 8, 7, stride=2, padding=3)
        self.conv2 = torch.nn.Conv1d(8, 16, 5, stride=2, padding=2)
        self.conv3 = torch.nn.Conv1d(16, 16, 5, stride=2, padding=2)
        self.fc = torch.nn.Linear(16 * (LENGTH // 8), dims)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.conv1(x.unsqueeze(1)))
        h = F.relu(self.conv2(h))
        h = F.relu(self.conv3(h))
        return F.normalize(self.fc(h.flatten(1)), dim=1)


def nn_accuracy(emb, y):
    """Same-class nearest-neighbour accuracy by cosine, leave-one-out."""
    sim = emb @ emb.t()
    sim.fill_diagonal_(-2.0)
    return (y[sim.argmax(dim=1)] == y).float().mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_prefix")
    ap.add_argument("--dims", type=int, default=32)
    ap.add_argument("--min-accuracy", type=float, default=0.9)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    started = time.monotonic()

    x, y = dataset(TRAIN_PER_CLASS, gen)
    x = standardise(x)
    encoder = Encoder(args.dims)
    head = torch.nn.Linear(args.dims, len(CLASSES))  # training only: not exported
    opt = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()), lr=3e-3)
    for _ in range(EPOCHS):
        order = torch.randperm(len(y), generator=gen)
        for i in range(0, len(y), BATCH):
            idx = order[i:i + BATCH]
            loss = F.cross_entropy(head(encoder(x[idx]) * 10.0), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()

    encoder.eval()
    tx, ty = dataset(TEST_PER_CLASS, gen)
    with torch.no_grad():
        accuracy = nn_accuracy(encoder(standardise(tx)), ty)
    scripted = torch.jit.script(encoder)
    scripted.save(args.out_prefix + ".pt")
    meta = {
        "format": 1,
        "input_length": LENGTH,
        "dims": args.dims,
        "normalisation": "standardise",
        "output": "l2-normalised",
        "classes": CLASSES,
        "seed": SEED,
        "nn_accuracy_cosine_loo": round(accuracy, 4),
        "test_pulses": TEST_PER_CLASS * len(CLASSES),
    }
    with open(args.out_prefix + ".json", "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    print(f"pulse encoder: {LENGTH} -> {args.dims}, same-class nearest-neighbour accuracy "
          f"{accuracy:.4f} over {TEST_PER_CLASS * len(CLASSES)} fresh pulses, "
          f"{time.monotonic() - started:.1f} s")
    if accuracy < args.min_accuracy:
        print(f"accuracy {accuracy:.4f} is below {args.min_accuracy}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
