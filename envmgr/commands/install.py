"""`envmgr install`: a CUDA package from bare machine to proof (doctor, then a cached, indexed or built
wheel, then verify); the flow is install_flow.py, the wheel's build-or-reuse install_build.py."""
from __future__ import annotations

import sys

import click

from envmgr.cli.main import Ctx
from envmgr.cli.options import recipe_options, selector_options
from envmgr.commands.install_build import install_wheel
from envmgr.commands.install_flow import flow_package, start_flow


@click.command("install", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@selector_options
@recipe_options
@click.option("--no-deps", is_flag=True, help="Install the wheel without its dependencies.")
@click.option("--rebuild", is_flag=True, help="Build again even when the wheel cache holds this key.")
@click.option("--wheel-index", metavar="URL|DIR", help="Look the key up in this wheel index before building "
              "(default: ENVMGR_WHEEL_INDEX, or [wheels] index in config.toml; '' turns it off).")
@click.option("--publish", "publish_to", metavar="DIR", help="Then publish the wheel into this index folder.")
@click.option("--fix", is_flag=True, help="llama-cpp-python flow: take the recipe's safe route past doctor findings.")
@click.option("--prebuilt-lib", metavar="DIR", help="llama-cpp-python flow: use this llama.cpp CUDA build folder.")
@click.option("--json", "as_json", is_flag=True, help="llama-cpp-python flow: print the report as JSON.")
@click.argument("pip_args", nargs=-1, required=True, type=click.UNPROCESSED, metavar="[PIP OPTIONS] SPEC")
@click.pass_obj
def command(obj: Ctx, vs, toolset, arch, cuda, pythons, from_file, refresh, strict, recipe, arch_list,
                    allow_unsupported_compiler, recipe_params, no_deps, rebuild, wheel_index, publish_to, pip_args, fix=False,
                    prebuilt_lib=None, as_json=False):
    """Build SPEC with a recipe once, cache the wheel, and pip install it (here or into --python EXE).

    \b
      envmgr install llama-cpp-python [SPEC]     doctor, build or cache, install, verify, report
      envmgr install --prebuilt-lib DIR llama-cpp-python   your llama.cpp CUDA build, verified
      envmgr install --recipe llama-cpp-python "llama-cpp-python==0.3.36"
      envmgr install --recipe llama-cpp-python --python .venv/bin/python ./llama_cpp_python-0.3.36.tar.gz
      envmgr install --recipe llama-cpp-python --no-index --find-links ./wheels llama-cpp-python==0.3.36
    The cache key is (package, version, source, CUDA, architectures, generator, CMAKE_ARGS, Python
    tag, platform): the same key in any venv installs the cached wheel in seconds. pip options
    (before SPEC) go to both `pip wheel` and `pip install`. The first --python is the target.
    """
    args = [a for a in pip_args if a != "--"] if pip_args[:1] == ("--",) else list(pip_args)

    if flow_package(recipe, args, prebuilt_lib):
        sys.exit(start_flow(click.get_current_context(), args, fix, prebuilt_lib, as_json))
    sys.exit(install_wheel(obj, args, vs=vs, toolset=toolset, arch=arch, cuda=cuda, pythons=pythons,
                           from_file=from_file, refresh=refresh, strict=strict, recipe=recipe, arch_list=arch_list,
                           allow_unsupported_compiler=allow_unsupported_compiler, recipe_params=recipe_params,
                           no_deps=no_deps, rebuild=rebuild, wheel_index=wheel_index, publish_to=publish_to).code)

