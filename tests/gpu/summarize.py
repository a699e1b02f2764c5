"""Turn a gpu_proof.sh work folder into summary.json and summary.md (only what was measured)."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path


def read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def build_facts(log: str) -> dict:
    archs = re.search(r"Using CMAKE_CUDA_ARCHITECTURES=(\S*) CMAKE_CUDA_ARCHITECTURES_NATIVE=(\S*)", log)
    ninja_steps = re.findall(r"^\s*\[(\d+)/(\d+)\]", log, re.M)
    return {
        "cuda_architectures": archs.group(1) if archs else "",
        "cuda_architectures_native": archs.group(2) if archs else "",
        "generator": "Ninja" if ninja_steps else ("Unix Makefiles" if re.search(r"^\[\s*\d+%\]", log, re.M) else "?"),
        "build_steps": int(ninja_steps[-1][1]) if ninja_steps else None,
        # ninja -v prints each nvcc command; one per CUDA translation unit
        "cuda_objects": len(re.findall(r"bin/nvcc\S* .* -c ", log)),
        "nvcc_targets": sorted(set(re.findall(r"--generate-code=(arch=compute_\d+,code=\[[^\]]*\])", log))),
        "build_command": (re.search(r"Run Build Command\(s\): (.*)", log) or [None, ""])[1].strip(),
        "cuda_compiler": (re.search(r"The CUDA compiler identification is (.*)", log) or [None, ""])[1],
        "host_compiler": (re.search(r"CUDA host compiler is (.*)", log) or [None, ""])[1],
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    work, out = Path(a.work), Path(a.out)
    times = {}
    for line in read(work / "times.txt").splitlines():
        name, secs, rc = line.split()
        times[name] = {"seconds": float(secs), "exit": int(rc)}
    pre = read(work / "preflight.log")
    gpu = re.search(r"^(NVIDIA[^,]*), ([\d.]+), ([\d.]+), (.*)$", pre, re.M)
    env = read(work / "recipe_env.log")
    s = {
        "date": (re.search(r"^date: (.*)", pre, re.M) or [None, ""])[1],
        "gpu": gpu.group(1) if gpu else "",
        "compute_cap": gpu.group(2) if gpu else "",
        "driver": gpu.group(3) if gpu else "",
        "gpu_memory": gpu.group(4) if gpu else "",
        "nvcc": (re.search(r"^(Cuda compilation tools.*)", pre, re.M) or [None, ""])[1],
        "cores": (re.search(r"^cores: (\d+)", pre, re.M) or [None, ""])[1],
        "cmake": (re.search(r"^cmake: (.*)", pre, re.M) or [None, ""])[1],
        "recipe_env": [l for l in env.splitlines() if l.startswith(("export CMAKE", "export CUDACXX"))],
        "steps": times,
        "recipe_build": build_facts(read(work / "recipe_build.log")),
        "naive_build": build_facts(read(work / "naive_build.log")),
    }
    for tag in ("a", "b"):
        try:
            s[f"model_{tag}"] = json.loads(read(work / f"model_{tag}.json"))
            s[f"model_{tag}"].pop("system_info", None)
        except ValueError:
            s[f"model_{tag}"] = None
    t = {k: v["seconds"] for k, v in times.items() if v["exit"] == 0}
    if "recipe_build" in t and "reinstall_b" in t:
        s["reinstall_speedup"] = round(t["recipe_build"] / t["reinstall_b"], 1)
    if "recipe_build" in t and "naive_build" in t:
        s["naive_over_recipe"] = round(t["naive_build"] / t["recipe_build"], 3)
    s["passed"] = (work / "PASSED").exists()
    (out / "summary.json").write_text(json.dumps(s, indent=2), encoding="utf-8")
    (out / "summary.md").write_text(render(s), encoding="utf-8")
    print(render(s))
    return 0


def render(s: dict) -> str:
    t = {k: v["seconds"] for k, v in s["steps"].items()}
    lines = [
        f"# GPU proof {s['date']}",
        "",
        f"- GPU: {s['gpu']} (compute capability {s['compute_cap']}, {s['gpu_memory']}), driver {s['driver']}",
        f"- {s['nvcc']}; {s['cmake']}; {s['cores']} cores",
        "",
    ]
    lines += ["| step | seconds | exit |", "|---|---:|---:|"]
    lines += [f"| {k} | {v['seconds']:.1f} | {v['exit']} |" for k, v in s["steps"].items()]
    lines.append("")
    for name in ("recipe_build", "naive_build"):
        f = s[name]
        if f["cuda_objects"] or f["cuda_architectures"]:
            lines.append(
                f"- {name}: {t.get(name, float('nan')):.1f} s, CMAKE_CUDA_ARCHITECTURES={f['cuda_architectures']}"
                f" (native: {f['cuda_architectures_native'] or '-'}), generator {f['generator']}, "
                f"{f['build_steps']} build steps, {f['cuda_objects']} CUDA objects"
            )
    if "reinstall_speedup" in s:
        lines.append(
            f"- reinstall from the wheel cache: {t['reinstall_b']:.1f} s vs build {t['recipe_build']:.1f} s "
            f"= {s['reinstall_speedup']}x faster"
        )
    if "naive_over_recipe" in s:
        lines.append(f"- naive build / recipe build = {s['naive_over_recipe']}")
    for tag in ("a", "b"):
        m = s.get(f"model_{tag}")
        if m:
            lines.append(
                f"- model in venv {tag.upper()}: gpu_offload={m.get('gpu_offload')}, offloaded "
                f"{', '.join(m.get('offloaded', []))}, {m.get('cuda_init', '')}; {m.get('cuda_model_buffer', '')};"
                f" {len(m.get('tokens', []))} tokens in {m.get('gen_seconds')} s; problems: {m.get('problems')}"
            )
    lines.append(f"- passed: {s['passed']}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
