"""doctor: checks (one small function per catalog id F01…F23) and build-log scanning.

Also the binary readers (dll.py, elf.py, winloader.py: PE and ELF imports, the Windows loader's
search order). Imports every layer up to cache/; wheels/, msbuild/, verify/ and the commands import it.
"""
