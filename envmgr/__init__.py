"""envmgr: Visual Studio + CUDA environments for building CUDA Python packages."""

__version__ = "0.1.0"
