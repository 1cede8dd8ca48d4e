#!/usr/bin/env python3
"""Writes a trained nmt Transformer as a CTranslate2 model with the same weights.

    python3 scripts/nmt_to_ctranslate2.py MODEL_DIR -o CT2_DIR [--quantization int8] [--force]

MODEL_DIR is what `nmt train` writes (config.json, model.pt, spm.model). CT2_DIR gets
CTranslate2's model.bin, its source/target vocabularies and a copy of spm.model (the
segmentation the model was trained on; scripts/ct2_translate.py reads it from there), and of
spm.src.model for a model with separate vocabularies.
--quantization int8 stores int8 weights quantised by CTranslate2 itself (what it recommends
for CPUs); without it the weights stay float32, bit for bit nmt's.

How nmt's Transformer (lib/nmt/models/transformer.cc) maps onto ctranslate2.specs.TransformerSpec:
  - post-norm (config "pre_norm": false) or pre-norm with a final LayerNorm after each stack;
    LayerNorm ε 1e-5 (LibTorch's default; CTranslate2 would otherwise use 1e-6);
  - the feed-forward's activation ("activation": relu, swish or gelu), biases everywhere, on the
    output projection too when the model has one ("output_bias": imported Marian models);
  - self-attention: nmt's fused qkv_proj is CTranslate2's fused linear_0 (q, k, v rows in that
    order); cross-attention: q_proj → linear_0, fused kv_proj → linear_1; out_proj → linear_2;
  - embeddings scaled by sqrt(d_model) unless "scale_embedding" is false (CTranslate2's
    scale_embeddings), and nmt's sinusoidal table ("positions": interleaved, sin on even and cos
    on odd dimensions, or concatenated, Marian's sines then cosines) stored explicitly as the
    position encodings, max_positions rows;
  - one embedding table shared by encoder and decoder when the vocabularies are shared or the
    model ties them ("tie_embeddings"), the output projection tied to the target table
    (CTranslate2 stores aliased arrays once);
  - special ids 0..3 = <pad> <unk> <s> </s> (nmt/text/special_ids.h) are the vocabulary's first
    pieces under the same names CTranslate2 expects: <s> starts the decoder, </s> ends it and is
    appended to every source (add_source_eos), as nmt does.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np


def fail(message):
    print(f"nmt_to_ctranslate2: {message}", file=sys.stderr)
    sys.exit(1)


def read_config(model_dir):
    path = os.path.join(model_dir, "config.json")
    try:
        with open(path, encoding="utf-8") as f:
            model = json.load(f)["model"]
    except (OSError, ValueError, KeyError) as e:
        fail(f"{path}: cannot read the model configuration ({e})")
    if model.get("type") != "transformer":
        fail(f"{path}: model type '{model.get('type')}': only nmt's Transformer has a CTranslate2 equivalent")
    return model


def read_weights(model_dir):
    """nmt's model.pt is a LibTorch archive that torch.jit.load reads (as scripts/reference does)."""
    try:
        import torch  # noqa: PLC0415 (heavy; only after the cheap checks)
    except ImportError:
        # The pinned wheel's Python side where scripts/setup.sh unpacked it (NMT_SETUP_BENCH=1).
        here = os.path.dirname(os.path.abspath(__file__))
        home = subprocess.run(["bash", os.path.join(here, "torch-home.sh")], check=True, text=True,
                              stdout=subprocess.PIPE).stdout.strip()
        sys.path[:0] = [home, home + "-cuda-deps"]
        try:
            import torch  # noqa: PLC0415
        except ImportError:
            fail(f"cannot import torch (nor from {home}): run NMT_LIBTORCH=wheel NMT_SETUP_BENCH=1 scripts/setup.sh")

    path = os.path.join(model_dir, "model.pt")
    if not os.path.isfile(path):
        fail(f"{path}: no such weights file")
    return {name: p.detach().float().numpy() for name, p in torch.jit.load(path, map_location="cpu").named_parameters()}


def read_pieces(spm_path, vocab_size):
    import sentencepiece  # noqa: PLC0415

    sp = sentencepiece.SentencePieceProcessor(model_file=spm_path)
    pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    expected = ["<pad>", "<unk>", "<s>", "</s>"]
    if pieces[:4] != expected:
        fail(f"{spm_path}: special pieces {pieces[:4]}, nmt models have {expected}")
    if len(pieces) != vocab_size:
        fail(f"{spm_path}: {len(pieces)} pieces, the model's vocabulary has {vocab_size}")
    return pieces


def sinusoidal_table(max_positions, d_model, layout="interleaved"):
    """nmt's PositionalEncoding table, computed as LibTorch does (float32 throughout; the
    concatenated layout in float64, rounded once, as nmt and transformers' Marian do)."""
    if layout == "concatenated":
        j = np.arange(d_model, dtype=np.float64)
        angle = np.arange(max_positions, dtype=np.float64)[:, None] / np.power(10000.0, 2 * (j // 2) / d_model)
        return np.concatenate([np.sin(angle[:, 0::2]), np.cos(angle[:, 1::2])], axis=1).astype(np.float32)
    position = np.arange(max_positions, dtype=np.float32)[:, None]
    div = np.exp(np.arange(0, d_model, 2, dtype=np.float32) * np.float32(-np.log(10000.0) / d_model))
    table = np.zeros((max_positions, d_model), dtype=np.float32)
    table[:, 0::2] = np.sin(position * div)
    table[:, 1::2] = np.cos(position * div)[:, : d_model // 2]
    return table


def build_spec(config, weights, source_pieces, target_pieces):
    from ctranslate2.specs import common_spec, transformer_spec  # noqa: PLC0415

    spec = transformer_spec.TransformerSpec.from_config(
        (config["encoder_layers"], config["decoder_layers"]),
        config["heads"],
        pre_norm=config["pre_norm"],
        activation={"relu": common_spec.Activation.RELU, "swish": common_spec.Activation.SWISH,
                    "gelu": common_spec.Activation.GELU}[config.get("activation", "relu")],
    )
    used = set()

    def w(name):
        if name not in weights:
            fail(f"model.pt has no '{name}' (not a Transformer of this config?)")
        used.add(name)
        return weights[name]

    def linear(target, name, bias=True):
        target.weight = w(f"{name}.weight")
        if bias:
            target.bias = w(f"{name}.bias")

    def norm(target, name):
        target.gamma = w(f"{name}.weight")
        target.beta = w(f"{name}.bias")

    def ffn_and_norm(target, prefix, norm_name):
        linear(target.ffn.linear_0, f"{prefix}.ffn.fc1")
        linear(target.ffn.linear_1, f"{prefix}.ffn.fc2")
        norm(target.ffn.layer_norm, f"{prefix}.{norm_name}")

    def self_attention_and_norm(target, prefix):
        linear(target.self_attention.linear[0], f"{prefix}.self_attn.qkv_proj")
        linear(target.self_attention.linear[1], f"{prefix}.self_attn.out_proj")
        norm(target.self_attention.layer_norm, f"{prefix}.norm1")

    src_table = w("src_embedding.weight")
    shared = (config["shared_vocab"] or config.get("tie_embeddings", False)) and config["src_vocab"] == config["tgt_vocab"]
    tgt_table = src_table if shared else w("tgt_embedding.weight")
    positions = sinusoidal_table(config["max_positions"], config["d_model"], config.get("positions", "interleaved"))
    scale = config.get("scale_embedding", True)

    spec.encoder.embeddings[0].weight = src_table
    spec.encoder.position_encodings.encodings = positions
    spec.encoder.scale_embeddings = scale
    for i, layer in enumerate(spec.encoder.layer):
        p = f"encoder.layers.{i}"
        self_attention_and_norm(layer, p)
        ffn_and_norm(layer, p, "norm2")
    if config["pre_norm"]:
        norm(spec.encoder.layer_norm, "encoder.final_norm")

    spec.decoder.embeddings.weight = tgt_table
    spec.decoder.position_encodings.encodings = positions
    spec.decoder.scale_embeddings = scale
    for i, layer in enumerate(spec.decoder.layer):
        p = f"decoder.layers.{i}"
        self_attention_and_norm(layer, p)
        linear(layer.attention.linear[0], f"{p}.cross_attn.q_proj")
        linear(layer.attention.linear[1], f"{p}.cross_attn.kv_proj")
        linear(layer.attention.linear[2], f"{p}.cross_attn.out_proj")
        norm(layer.attention.layer_norm, f"{p}.norm2")
        ffn_and_norm(layer, p, "norm3")
    if config["pre_norm"]:
        norm(spec.decoder.layer_norm, "decoder.final_norm")
    spec.decoder.projection.weight = tgt_table if config["tie_output"] else w("output.weight")
    if config.get("output_bias", False):
        spec.decoder.projection.bias = w("output_bias" if config["tie_output"] else "output.bias")

    left = sorted(set(weights) - used)
    if left:
        fail(f"model.pt has weights this converter does not place: {left[:5]}")

    spec.config.layer_norm_epsilon = 1e-5
    spec.config.add_source_eos = True
    spec.config.decoder_start_token = "<s>"
    spec.register_source_vocabulary(source_pieces)
    spec.register_target_vocabulary(target_pieces)
    return spec


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", help="nmt model directory (config.json, model.pt, spm.model)")
    parser.add_argument("-o", "--output", required=True, help="CTranslate2 model directory to write")
    parser.add_argument("--quantization", default=None,
                        help="CTranslate2 weight type, e.g. int8 (default: float32, nmt's weights unchanged)")
    parser.add_argument("--force", action="store_true", help="Replace an existing output directory")
    a = parser.parse_args()
    if os.path.exists(a.output) and not a.force:
        print(f"nmt_to_ctranslate2: {a.output} exists (--force replaces it)", file=sys.stderr)
        sys.exit(2)
    import ctranslate2  # noqa: PLC0415

    config = read_config(a.model)
    spm_path = os.path.join(a.model, "spm.model")
    target_pieces = read_pieces(spm_path, config["tgt_vocab"])
    # Separate vocabularies (nmt train --separate-vocab): the source side has its own model.
    src_spm_path = spm_path if config["shared_vocab"] else os.path.join(a.model, "spm.src.model")
    source_pieces = read_pieces(src_spm_path, config["src_vocab"])
    weights = read_weights(a.model)

    class NmtConverter(ctranslate2.converters.Converter):
        def _load(self):
            return build_spec(config, weights, source_pieces, target_pieces)

    NmtConverter().convert(a.output, quantization=a.quantization, force=a.force)
    shutil.copyfile(spm_path, os.path.join(a.output, "spm.model"))
    if src_spm_path != spm_path:
        shutil.copyfile(src_spm_path, os.path.join(a.output, "spm.src.model"))
    print(f"nmt_to_ctranslate2: wrote {a.output} ({a.quantization or 'float32'} weights)", file=sys.stderr)


if __name__ == "__main__":
    main()
