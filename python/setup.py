"""The optional C accelerator of Kernel calls (tilec/_fast.c).  Its build
is allowed to fail (no C compiler, no Python headers): the package then
installs without it and calls kernels through ctypes alone, as
python/README.md says.  Everything else is in pyproject.toml."""
from setuptools import Extension, setup

setup(ext_modules=[Extension("tilec._fast", ["tilec/_fast.c"],
                             extra_compile_args=["-std=c11", "-O2"],
                             optional=True)])
