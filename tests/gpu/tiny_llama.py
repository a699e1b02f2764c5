"""Write a tiny random-weight llama GGUF with the `gguf` package, load it with n_gpu_layers=-1, and prove
the CUDA backend ran it.

    python tests/gpu/tiny_llama.py --model /tmp/tiny.gguf [--json result.json]

The parent process writes the model, runs the load and generation in a child (llama.cpp logs from C
to the process's stderr, which only a parent can capture whole), then checks the child's output:
llama_supports_gpu_offload() is True, the log says `offloaded N/N layers to GPU` with N > 0, the
CUDA backend initialised (`ggml_cuda_init: found`), and tokens were generated. Exit 0 only then.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time

N_EMBD, N_HEAD, N_FF, N_LAYER, N_CTX = 256, 4, 512, 4, 256  # head size 64: every CUDA kernel has it


def vocab() -> tuple[list[str], list[float], list[int]]:
    """A sentencepiece-style vocabulary: unk/bos/eos, the 256 byte tokens, then some words."""
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(256)]
    types = [2, 3, 3] + [6] * 256  # UNKNOWN, CONTROL, BYTE
    words = ["\u2581", "\u2581the", "\u2581a", "\u2581GPU", "\u2581hello", "\u2581world", "\u2581is", "\u2581on"]
    words += [f"\u2581{c}" for c in "bcdefghijklmnopqrstuvwxyz"] + list("abcdefghijklmnopqrstuvwxyz")
    tokens += words
    types += [1] * len(words)  # NORMAL
    scores = [0.0] * 259 + [-float(i) for i in range(len(words))]
    return tokens, scores, types


def write_model(path: str, seed: int = 0) -> int:
    import numpy as np
    import gguf

    rng = np.random.default_rng(seed)
    tokens, scores, types = vocab()
    n_vocab = len(tokens)
    w = gguf.GGUFWriter(path, "llama")
    w.add_context_length(N_CTX)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD)
    w.add_rope_dimension_count(N_EMBD // N_HEAD)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(n_vocab)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)

    def t(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    w.add_tensor("token_embd.weight", t(n_vocab, N_EMBD))
    w.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    w.add_tensor("output.weight", t(n_vocab, N_EMBD))
    for i in range(N_LAYER):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            w.add_tensor(p + name + ".weight", t(N_EMBD, N_EMBD))
        w.add_tensor(p + "ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        w.add_tensor(p + "ffn_gate.weight", t(N_FF, N_EMBD))
        w.add_tensor(p + "ffn_up.weight", t(N_FF, N_EMBD))
        w.add_tensor(p + "ffn_down.weight", t(N_EMBD, N_FF))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return n_vocab


def child(model: str, n_tokens: int) -> None:
    """Runs in the child: load with every layer on the GPU, generate, print one RESULT line."""
    import llama_cpp

    out = {
        "version": llama_cpp.__version__,
        "gpu_offload": bool(llama_cpp.llama_supports_gpu_offload()),
        "system_info": llama_cpp.llama_print_system_info().decode(errors="replace"),
        "lib": getattr(llama_cpp.llama_cpp, "_lib_base_name", ""),
    }
    t0 = time.perf_counter()
    llm = llama_cpp.Llama(model_path=model, n_gpu_layers=-1, n_ctx=N_CTX, seed=1, verbose=True)
    out["load_seconds"] = round(time.perf_counter() - t0, 3)
    prompt = llm.tokenize(b"hello world, the GPU is on")
    got = []
    t0 = time.perf_counter()
    for tok in llm.generate(prompt, temp=0.0):  # generate() does not stop at EOS: exactly n_tokens
        got.append(int(tok))
        if len(got) >= n_tokens:
            break
    out["gen_seconds"] = round(time.perf_counter() - t0, 4)
    out["tokens"] = got
    out["text"] = llm.detokenize(got).decode(errors="replace")
    sys.stderr.flush()
    print("RESULT " + json.dumps(out), flush=True)


def check(text: str, n_tokens: int) -> tuple[dict, list[str]]:
    result_line = next((l for l in text.splitlines() if l.startswith("RESULT ")), None)
    res = json.loads(result_line[7:]) if result_line else {}
    problems = []
    if not result_line:
        problems.append("the child printed no RESULT line (crash or import failure; see its output)")
    if res and not res.get("gpu_offload"):
        problems.append("llama_supports_gpu_offload() is False: a CPU build (failures.md F18)")
    m = re.findall(r"offloaded (\d+)/(\d+) layers to GPU", text)
    res["offloaded"] = [f"{a}/{b}" for a, b in m]
    if not m:
        problems.append("no 'offloaded N/M layers to GPU' line in the load log")
    elif any(a != b or int(a) == 0 for a, b in m):
        problems.append(f"not every layer was offloaded: {res['offloaded']}")
    cuda_init = re.search(r"ggml_cuda_init: found (\d+) CUDA devices.*", text)
    res["cuda_init"] = cuda_init.group(0) if cuda_init else ""
    if not cuda_init:
        problems.append("no 'ggml_cuda_init: found N CUDA devices' line: the CUDA backend did not start")
    dev = re.search(r"Device 0: (.*)", text)
    res["device"] = dev.group(1).strip() if dev else ""
    buf = re.findall(r"(CUDA0 model buffer size\s*=\s*[\d.]+ MiB)", text)
    res["cuda_model_buffer"] = buf[0] if buf else ""
    if res and len(res.get("tokens", [])) != n_tokens:
        problems.append(f"generated {len(res.get('tokens', []))} tokens, expected {n_tokens}")
    return res, problems


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--tokens", type=int, default=8)
    ap.add_argument("--json", help="write the checked result here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--skip-write", action="store_true", help="reuse an existing model file")
    a = ap.parse_args()
    if a.child:
        child(a.model, a.tokens)
        return 0
    if not a.skip_write:
        n_vocab = write_model(a.model)
        print(
            f"wrote {a.model}: llama, {N_LAYER} layers, n_embd {N_EMBD}, {N_HEAD} heads, vocab {n_vocab}, "
            f"random f32 weights",
            flush=True,
        )
    proc = subprocess.run(
        [sys.executable, __file__, "--child", "--model", a.model, "--tokens", str(a.tokens)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    print(proc.stdout, flush=True)
    res, problems = check(proc.stdout, a.tokens)
    res["child_exit"] = proc.returncode
    if proc.returncode != 0:
        problems.append(f"the child exited with {proc.returncode}")
    res["problems"] = problems
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=2)
    summary = {
        k: res.get(k)
        for k in (
            "version",
            "gpu_offload",
            "offloaded",
            "cuda_init",
            "device",
            "cuda_model_buffer",
            "tokens",
            "load_seconds",
            "gen_seconds",
        )
    }
    print("CHECKED " + json.dumps(summary), flush=True)
    for p in problems:
        print(f"FAIL: {p}", flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
