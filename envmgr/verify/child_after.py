"""Run by the TARGET Python (imported by child.py and child_any.py from their own folder): `verify --after`'s
part of the child. Standard library only, Python 3.8 syntax: the target may not have envmgr.

It imports the user's app modules first (torch, say), in the same process the package is imported into
next, and lists every module loaded in this process: /proc/self/maps on Linux, EnumProcessModules on
Windows (kernel32's K32EnumProcessModules, psapi's on systems older than Windows 7). Judging what the list
means (two OpenMP runtimes, two CUDA runtime majors) is the parent's job: verify/runtimes.py.
"""

import ctypes
import os
import sys

MAX_MODULES = 4096


def loaded_modules():
    """Every shared library mapped into this process, by path, in load order where the system keeps it."""
    paths = []
    if sys.platform.startswith("linux"):
        try:
            with open("/proc/self/maps") as fh:
                for line in fh:
                    parts = line.split(None, 5)
                    if len(parts) == 6 and parts[5].startswith("/"):
                        paths.append(parts[5].strip())
        except OSError:
            return []
    elif sys.platform == "win32":
        try:
            paths = windows_modules()
        except (OSError, AttributeError):
            return []
    return list(dict.fromkeys(p for p in paths if not p.endswith(" (deleted)")))[:MAX_MODULES]


def _enum_process_modules():
    kernel32 = ctypes.WinDLL("kernel32")
    try:
        return kernel32.K32EnumProcessModules
    except AttributeError:  # before Windows 7 the function lives in psapi.dll only
        return ctypes.WinDLL("psapi").EnumProcessModules


def windows_modules():
    from ctypes import wintypes

    kernel32 = ctypes.WinDLL("kernel32")
    proc = kernel32.GetCurrentProcess
    proc.restype = wintypes.HANDLE
    handle = proc()
    enum = _enum_process_modules()
    enum.argtypes = [wintypes.HANDLE, ctypes.c_void_p, wintypes.DWORD, ctypes.POINTER(wintypes.DWORD)]
    enum.restype = wintypes.BOOL
    size = 1024
    while True:  # a process with torch loaded has hundreds of modules: grow until the list fits
        mods = (wintypes.HMODULE * size)()
        need = wintypes.DWORD()
        if not enum(handle, mods, ctypes.sizeof(mods), ctypes.byref(need)):
            return []
        count = need.value // ctypes.sizeof(wintypes.HMODULE)
        if count <= size or size >= MAX_MODULES:
            break
        size = min(count + 64, MAX_MODULES)
    name = kernel32.GetModuleFileNameW
    name.argtypes = [wintypes.HMODULE, wintypes.LPWSTR, wintypes.DWORD]
    name.restype = wintypes.DWORD
    out = []
    for i in range(min(count, size)):
        buf = ctypes.create_unicode_buffer(32768)
        if mods[i] and name(mods[i], buf, 32768):
            out.append(buf.value)
    return out


def after_modules(text):
    """`torch,numpy` (verify --after) -> ["torch", "numpy"]."""
    return [m.strip() for m in (text or "").split(",") if m.strip()]


def import_after(modules, emit):
    """Import each app module in order, one `after` record each (what it loaded); False at the first that
    fails (the package is then not imported: the question was the package after these modules)."""
    for module in modules:
        before = set(loaded_modules())
        try:
            mod = __import__(module)
        except BaseException as exc:  # ImportError, or the module's own error (an OSError from its DLLs)
            emit("after", module=module, ok=False, error_type=type(exc).__name__, error=str(exc)[:2000])
            return False
        new = [p for p in loaded_modules() if p not in before]
        version = getattr(mod, "__version__", None)
        emit(
            "after",
            module=module,
            ok=True,
            file=getattr(mod, "__file__", None),
            version=str(version) if version is not None else None,
            libraries=new[:400],
            library_count=len(new),
        )
    return True


def emit_runtimes(emit):
    """Every module loaded now (after the --after modules and the package): the parent finds duplicates."""
    emit("runtimes", modules=loaded_modules(), platform=sys.platform, pid=os.getpid())
