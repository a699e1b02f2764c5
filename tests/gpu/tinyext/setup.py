"""A tiny PyTorch CUDA extension: the GPU proof of the torch-extension recipe (tests/gpu/issue21_proof.sh)."""

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="tinyext",
    version="0.1.0",
    ext_modules=[CUDAExtension("tinyext_cuda", ["bind.cpp", "add_kernel.cu"])],
    cmdclass={"build_ext": BuildExtension},
    install_requires=["torch"],
)
