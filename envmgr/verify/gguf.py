"""A minimal GGUF writer (standard library only) and the tiny llama model `envmgr verify` loads.

GGUF v3, little-endian (ggml's docs/gguf.md): header (magic "GGUF", version, tensor count, KV count),
the metadata key/value pairs, the tensor infos (name, dims in ggml order -- ne0 first --, ggml type,
offset into the data section), zero padding to `general.alignment` (32 by default), then each
tensor's bytes at an aligned offset. Only the types the verifier needs are written: u32, i32, f32,
bool, string, arrays of them; f32 and f16 tensors.

The model is random-weight llama: every tensor a llama.cpp CUDA build offloads, an SPM-style
vocabulary (unk/bos/eos, 256 byte tokens, a few words) so tokenize/detokenize work. It makes no
sense as text; it only has to be loaded, offloaded and run.
"""

from __future__ import annotations

import os
import random
import struct
from array import array
from dataclasses import dataclass
from typing import Any

MAGIC = b"GGUF"
VERSION = 3
ALIGNMENT = 32

# gguf value types
U32, I32, F32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9
# ggml tensor types
GGML_F32, GGML_F16 = 0, 1


@dataclass(frozen=True)
class Tensor:
    name: str
    dims: tuple[int, ...]  # ggml order: ne0 (the contiguous one) first
    ggml_type: int
    data: bytes


@dataclass(frozen=True)
class TinyLlama:
    n_embd: int = 128
    n_head: int = 2  # head size 64: a size every CUDA attention kernel handles
    n_ff: int = 256
    n_layer: int = 2
    n_ctx: int = 128
    seed: int = 0
    f16: bool = True  # f16 matrices go through cuBLAS/tensor cores like a real model's


def _string(text: str) -> bytes:
    raw = text.encode("utf-8")
    return struct.pack("<Q", len(raw)) + raw


_SCALAR = {U32: "<I", I32: "<i", F32: "<f", BOOL: "<?"}


def _value(kind: int, value: Any) -> bytes:
    if kind == STRING:
        return _string(value)
    if kind == ARRAY:
        item_kind, items = value
        body = (
            b"".join(_value(item_kind, v) for v in items)
            if item_kind == STRING
            else struct.pack(f"<{len(items)}{_SCALAR[item_kind][1]}", *items)
        )
        return struct.pack("<IQ", item_kind, len(items)) + body
    return struct.pack(_SCALAR[kind], value)


def _pad(n: int, align: int = ALIGNMENT) -> int:
    return (align - n % align) % align


def gguf_bytes(kvs: list[tuple[str, int, object]], tensors: list[Tensor]) -> bytes:
    """The whole file: kvs are (key, gguf type, value); an ARRAY value is (item type, items)."""
    head = [MAGIC, struct.pack("<IQQ", VERSION, len(tensors), len(kvs))]
    for key, kind, value in kvs:
        head += [_string(key), struct.pack("<I", kind), _value(kind, value)]
    offset = 0
    for t in tensors:
        head += [
            _string(t.name),
            struct.pack("<I", len(t.dims)),
            struct.pack(f"<{len(t.dims)}Q", *t.dims),
            struct.pack("<IQ", t.ggml_type, offset),
        ]
        offset += len(t.data) + _pad(len(t.data))
    out = bytearray(b"".join(head))
    out += bytes(_pad(len(out)))
    for t in tensors:
        out += t.data
        out += bytes(_pad(len(t.data)))
    return bytes(out)


def vocabulary() -> tuple[list[str], list[float], list[int]]:
    """(tokens, scores, types): SPM layout; types 2 unknown, 3 control, 6 byte, 1 normal."""
    words = ["\u2581", "\u2581the", "\u2581GPU", "\u2581is", "\u2581on", "\u2581hello", "\u2581world"]
    words += [f"\u2581{c}" for c in "abcdefghijklmnopqrstuvwxyz"] + list("abcdefghijklmnopqrstuvwxyz")
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + words
    types = [2, 3, 3] + [6] * 256 + [1] * len(words)
    scores = [0.0] * 259 + [-float(i) for i in range(len(words))]
    return tokens, scores, types


def _matrix(rng: random.Random, rows: int, cols: int, f16: bool) -> tuple[tuple[int, int], int, bytes]:
    """A (rows x cols) weight as ggml stores it: dims (cols, rows), values ~ N(0, 0.02)."""
    values = [rng.gauss(0.0, 0.02) for _ in range(rows * cols)]
    data = struct.pack(f"<{len(values)}e", *values) if f16 else array("f", values).tobytes()
    return (cols, rows), GGML_F16 if f16 else GGML_F32, data


def _ones(n: int) -> Tensor:
    return Tensor("", (n,), GGML_F32, array("f", [1.0] * n).tobytes())


def tiny_llama(spec: TinyLlama = TinyLlama()) -> bytes:
    """The model file's bytes (deterministic for a given spec)."""
    rng = random.Random(spec.seed)
    tokens, scores, types = vocabulary()
    arch = "llama"
    kvs = [
        ("general.architecture", STRING, arch),
        ("general.name", STRING, "envmgr-verify-tiny-llama"),
        ("general.alignment", U32, ALIGNMENT),
        (f"{arch}.context_length", U32, spec.n_ctx),
        (f"{arch}.embedding_length", U32, spec.n_embd),
        (f"{arch}.block_count", U32, spec.n_layer),
        (f"{arch}.feed_forward_length", U32, spec.n_ff),
        (f"{arch}.attention.head_count", U32, spec.n_head),
        (f"{arch}.attention.head_count_kv", U32, spec.n_head),
        (f"{arch}.rope.dimension_count", U32, spec.n_embd // spec.n_head),
        (f"{arch}.attention.layer_norm_rms_epsilon", F32, 1e-5),
        (f"{arch}.vocab_size", U32, len(tokens)),
        ("tokenizer.ggml.model", STRING, "llama"),
        ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
        ("tokenizer.ggml.scores", ARRAY, (F32, scores)),
        ("tokenizer.ggml.token_type", ARRAY, (I32, types)),
        ("tokenizer.ggml.unknown_token_id", U32, 0),
        ("tokenizer.ggml.bos_token_id", U32, 1),
        ("tokenizer.ggml.eos_token_id", U32, 2),
        ("tokenizer.ggml.add_bos_token", BOOL, True),
    ]
    e, v, ff = spec.n_embd, len(tokens), spec.n_ff

    def mat(name: str, rows: int, cols: int, f16: bool = spec.f16) -> Tensor:
        dims, kind, data = _matrix(rng, rows, cols, f16)
        return Tensor(name, dims, kind, data)

    def norm(name: str) -> Tensor:
        t = _ones(e)
        return Tensor(name, t.dims, t.ggml_type, t.data)

    # token_embd stays f32: get_rows on it runs wherever the input layer lives (the CPU).
    tensors = [mat("token_embd.weight", v, e, f16=False), norm("output_norm.weight"), mat("output.weight", v, e)]
    for i in range(spec.n_layer):
        p = f"blk.{i}."
        tensors += [
            norm(p + "attn_norm.weight"),
            mat(p + "attn_q.weight", e, e),
            mat(p + "attn_k.weight", e, e),
            mat(p + "attn_v.weight", e, e),
            mat(p + "attn_output.weight", e, e),
            norm(p + "ffn_norm.weight"),
            mat(p + "ffn_gate.weight", ff, e),
            mat(p + "ffn_up.weight", ff, e),
            mat(p + "ffn_down.weight", e, ff),
        ]
    return gguf_bytes(kvs, tensors)


def write_tiny_llama(path: str | os.PathLike[str], spec: TinyLlama = TinyLlama()) -> int:
    """Write the model to `path`; returns its size in bytes."""
    data = tiny_llama(spec)
    with open(path, "wb") as fh:
        fh.write(data)
    return len(data)
