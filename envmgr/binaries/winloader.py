"""The Windows loader's search order for a DLL's dependencies, per the way Python loads the DLL.

Three ways a Python program on Windows loads a DLL, each with its own search order:
- `ctypes`: `ctypes.CDLL(path)` on Python 3.8+ (winmode=None) calls LoadLibraryExW with
  LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR: the DLL's own folder, python.exe's
  folder, the os.add_dll_directory folders, System32. PATH is not searched
  (https://docs.python.org/3/library/os.html#os.add_dll_directory,
  https://learn.microsoft.com/windows/win32/api/libloaderapi/nf-libloaderapi-loadlibraryexw).
- `winmode0`: `ctypes.CDLL(path, winmode=0)`: LoadLibraryExW(path, NULL, 0), the standard order:
  python.exe's folder, System32, the Windows folder, the current folder, PATH. os.add_dll_directory
  folders are not searched, and neither is the DLL's own folder.
- `llama_cpp`: llama_cpp/_ctypes_extensions.py load_shared_library (0.3.x) calls
  os.add_dll_directory for llama_cpp\\lib, CUDA_PATH\\bin, CUDA_PATH\\lib (and HIP_PATH's), prepends
  llama_cpp\\lib to PATH and loads with winmode=ctypes.RTLD_GLOBAL, which is 0 on Windows: `winmode0`
  with the lib folder first on PATH. add_dll_directory raises [WinError 3] for a folder that does
  not exist, so a stale CUDA_PATH stops the import before any DLL is loaded (F16).
Measured under Windows CPython in Wine with NVIDIA's DLLs: docs/doctor.md, "What the Windows loader
does, measured".
"""

from __future__ import annotations

from dataclasses import dataclass

from envmgr.host.base import Host, host_path, join

LOADERS = ("llama_cpp", "ctypes", "winmode0")
_DESCRIBE = {
    "ctypes": "ctypes.CDLL(path) (Python 3.8+, winmode=None): LoadLibraryExW with LOAD_LIBRARY_SEARCH_DEFAULT_DIRS"
    " | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR searches the DLL's folder, the python.exe folder, the "
    "os.add_dll_directory folders and System32; PATH is not searched",
    "winmode0": "ctypes.CDLL(path, winmode=0): LoadLibraryExW(path, NULL, 0) searches the python.exe folder, "
    "System32, the Windows folder, the current folder (not modelled) and PATH; os.add_dll_directory "
    "folders and the DLL's own folder are not searched",
    "llama_cpp": "llama_cpp's loader: PATH gets llama_cpp\\lib prepended, then LoadLibraryExW(path, NULL, 0) "
    "(winmode=0) searches the python.exe folder, System32, the Windows folder, the current folder "
    "(not modelled) and PATH; os.add_dll_directory(CUDA_PATH\\bin) is not consulted in that mode",
}


@dataclass(frozen=True)
class LoaderModel:
    name: str  # one of LOADERS
    dirs: tuple[tuple[str, str], ...]  # (folder, label) in search order
    description: str
    blocked: str = ""  # why the load never happens (llama_cpp's add_dll_directory raising)
    ignored: tuple[str, ...] = ()  # os.add_dll_directory folders this mode does not search


def loader_model(
    host: Host, loader: str, dll_dir: str, python_exe: str | None, dll_dirs: tuple[str, ...] = ()
) -> LoaderModel:
    """The search order `loader` uses for the dependencies of a DLL in `dll_dir`."""
    if loader not in LOADERS:
        raise ValueError(loader)
    env = host.env
    root = env.get("SystemRoot") or env.get("windir") or "C:\\Windows"
    app = [(str(host_path(host, python_exe).parent), "the application (python.exe) folder")] if python_exe else []
    system32 = (join(host, root, "System32"), "System32")
    added = [(d, f"os.add_dll_directory {i + 1}") for i, d in enumerate(dll_dirs)]
    if loader == "ctypes":
        dirs = [(dll_dir, "the DLL's own folder")] + app + added + [system32]
        return LoaderModel(loader, tuple(dirs), _DESCRIBE[loader])
    path = [p.strip().strip('"') for p in env.get("PATH", "").split(";") if p.strip()]
    labels = [f"PATH entry {i + 1}" for i in range(len(path))]
    blocked = ""
    if loader == "llama_cpp":
        path, labels = [dll_dir] + path, ["llama_cpp's own PATH prepend"] + labels
        blocked = _llama_cpp_blocked(host)
    # The current folder comes between the Windows folder and PATH; the Host does not know it.
    dirs = app + [system32, (root, "the Windows folder")] + list(zip(path, labels, strict=True))
    return LoaderModel(loader, tuple(dirs), _DESCRIBE[loader], blocked, tuple(dll_dirs))


def _llama_cpp_blocked(host: Host) -> str:
    """llama_cpp calls os.add_dll_directory on CUDA_PATH\\bin and \\lib (and HIP_PATH's) unconditionally."""
    for name in ("CUDA_PATH", "HIP_PATH"):
        value = host.env.get(name)
        if not value:
            continue
        for sub in ("bin", "lib"):
            folder = join(host, value, sub)
            if not host.is_dir(folder):
                return (
                    f"os.add_dll_directory({name}\\{sub}) raises [WinError 3] before any DLL is loaded: "
                    f"{folder} does not exist (F16)"
                )
    return ""
