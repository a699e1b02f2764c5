"""binaries: what a built file is, read from its bytes and paths; frozen facts out.

PE imports and exports (dll.py, dllsyms.py), ELF NEEDED and symbol versions (elf.py, elfsyms.py), the
Windows loader's search order (winloader.py), CUDA fat binaries and the device code they carry
(devicecode.py), how a GPU runs that code (gpufit.py), and runtime copies loaded twice in one process
(runtimes.py). Imports only the vocabulary, files/ and the Host seam; wheels/, verify/ and doctor/ use it.
"""
