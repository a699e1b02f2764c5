"""The commands: one module per command, named after it (`envmgr fix-msbuild` is fix_msbuild.py), each
exposing `command`; helpers a command alone uses sit beside it (install_flow.py, install_build.py,
install_fix.py, fix_msbuild_flow.py).

A command parses its options (cli.options), calls the core (snapshot, cache, recipes, doctor, wheels,
msbuild, verify) and renders the result (output). Commands may import every layer below them and
cli/, never one another except their own helpers. cli/main.py loads a command's module only when click
asks for it, so `envmgr --version` and a cached `envmgr export` import none of them.
"""
