"""Build pyshmem._C with CMake (the pybind11 cmake_example pattern).

`pip install .` / `pip install -e .` run CMake on CMakeLists.txt and place the
extension inside the pyshmem package. CUDA and UCX are detected by CMake and optional.
Set PYSHMEM_CMAKE_ARGS to pass extra arguments, CMAKE_BUILD_PARALLEL_LEVEL for jobs.
"""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        out = Path(self.get_ext_fullpath(ext.name)).resolve().parent
        build_type = os.environ.get("PYSHMEM_BUILD_TYPE", "Release")
        build_dir = Path(self.build_temp).resolve() / ext.name
        build_dir.mkdir(parents=True, exist_ok=True)
        args = [
            f"-DCMAKE_LIBRARY_OUTPUT_DIRECTORY={out}{os.sep}",
            f"-DPython_EXECUTABLE={sys.executable}",
            f"-DCMAKE_BUILD_TYPE={build_type}",
        ]
        try:
            import pybind11

            args.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
        except ImportError:
            pass
        try:  # UCX headers from the libucx wheel (a build requirement)
            import libucx

            args.append(f"-DPYSHMEM_UCX_INCLUDE={Path(libucx.__file__).parent / 'include'}")
        except ImportError:
            pass
        try:
            import ninja  # noqa: F401

            args += ["-G", "Ninja"]
        except ImportError:
            pass
        args += shlex.split(os.environ.get("PYSHMEM_CMAKE_ARGS", ""))
        env = dict(os.environ)
        env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        subprocess.run(["cmake", str(ROOT), *args], cwd=build_dir, check=True, env=env)
        subprocess.run(["cmake", "--build", ".", "--config", build_type], cwd=build_dir, check=True, env=env)
        # The build generated <nvshmem.h> next to the extension (CMakeLists.txt); in-place and
        # editable installs import the package from the source tree, so it goes there too.
        # The same for the runtime library programs built with pyshmem-nvcc link (lib/).
        for built in ("nvshmem_include", "lib"):
            generated = out / built
            source_pkg = ROOT / "pyshmem" / built
            if generated.is_dir() and generated.resolve() != source_pkg.resolve():
                shutil.copytree(generated, source_pkg, dirs_exist_ok=True)


class BuildPyWithHeaders(build_py):
    """Ships the public headers (csrc/include/pyshmem) inside the package as
    pyshmem/include, so an installed pyshmem can compile device code
    (pyshmem.cuda.include_paths()). A source checkout uses csrc/include directly."""

    def run(self):
        super().run()
        dest = Path(self.build_lib) / "pyshmem" / "include"
        shutil.copytree(ROOT / "csrc" / "include", dest, dirs_exist_ok=True)


setup(ext_modules=[CMakeExtension("pyshmem._C")], cmdclass={"build_ext": CMakeBuild, "build_py": BuildPyWithHeaders})
