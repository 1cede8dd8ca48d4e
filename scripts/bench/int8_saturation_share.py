#!/usr/bin/env python3
"""How many weight pairs of a model the saturating AVX2 int8 loop can get wrong (docs/benchmarks.md).

MKL's and oneDNN's AVX2 int8 GEMMs (CTranslate2's on CPUs without VNNI) multiply activations
offset to [1, 255] by int8 weights and sum each pair of products into int16 with saturation:
a pair (a, b) of same-sign weights with |a| + |b| > 128 can exceed 32 767 when both activations
are large. This quantises every Linear weight of an nmt model as nmt does (per output channel,
symmetric, [-127, 127]) and counts those pairs (inputs 2k and 2k + 1 of one output channel).

    H=$(scripts/torch-home.sh); PYTHONPATH=$H:$H-cuda-deps python3 scripts/bench/int8_saturation_share.py MODEL_DIR
"""
import sys
import warnings

warnings.filterwarnings("ignore")  # torch.jit.load's deprecation, NumPy not installed
import torch  # noqa: E402


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: int8_saturation_share.py MODEL_DIR", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    try:
        model = torch.jit.load(sys.argv[1] + "/model.pt")
    except (RuntimeError, ValueError, OSError) as error:
        print(f"int8_saturation_share: {sys.argv[1]}/model.pt: {error}".splitlines()[0], file=sys.stderr)
        return 1
    pairs = at_risk = 0
    for name, weight in model.named_parameters():
        if weight.dim() != 2 or "embed" in name or weight.shape[1] % 2:
            continue
        w = weight.detach().float()
        scale = (w.abs().amax(1, keepdim=True) / 127).clamp_min(1e-30)
        q = torch.round(w / scale).clamp(-127, 127)
        a, b = q[:, 0::2], q[:, 1::2]
        risky = (a * b > 0) & (a.abs() + b.abs() > 128)
        pairs += a.numel()
        at_risk += int(risky.sum())
        print(f"{name}\t{tuple(q.shape)}\t{100 * risky.float().mean():.2f} %")
    print(f"all Linear weights: {at_risk} of {pairs} pairs ({100 * at_risk / max(pairs, 1):.2f} %) can saturate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
