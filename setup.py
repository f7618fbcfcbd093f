"""setuptools' half of pyproject.toml: the CMake build, and what of it goes into the wheel.

`pip wheel --no-build-isolation .` and `pip install --no-build-isolation .` run CMakeBuild:
- with PARITY_BUILD_DIR naming a configured CMake build tree of this checkout, it brings that
  tree's targets `parity` and `parity_python` up to date (nothing to compile after ./test.sh)
  and takes them from there, so CI does not compile everything a second time;
- otherwise it configures build-wheel/ (Release, no tests or benchmarks, the module built for
  the interpreter running pip) and builds those two targets there.
It then copies the extension module to parity/_parity<EXT_SUFFIX> and the executable to
parity/_bin/parity, which the console script `parity` (python/parity/_cli.py) runs. The wheel
holds an extension module, so it is tagged for this interpreter and platform (cp311-cp311-
linux_x86_64 on Debian 12) and pip refuses it elsewhere. ONNX Runtime is not bundled: the C++
backend finds libonnxruntime at run time, as the command built by CMake does.
"""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# One level below the checkout, like build/: ccache (base_dir) then serves the same objects.
FRESH_BUILD_DIR = ROOT / "build-wheel"
TARGETS = ["parity", "parity_python"]


def fail(message):
    raise SystemExit(f"[!] failed to build Parity's wheel: {message}")


def cmake_project_version():
    """The version in CMakeLists.txt's project(parity VERSION x.y.z): the one source of it."""
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(\s*parity\s+VERSION\s+([0-9]+(?:\.[0-9]+){0,3})\b", text)
    if not match:
        fail(f"{ROOT / 'CMakeLists.txt'} has no 'project(parity VERSION x.y.z ...)' line")
    return match.group(1)


def cmake_cache(build_dir):
    """CMakeCache.txt's entries (NAME:TYPE=value) as {NAME: value}."""
    entries = {}
    for line in (build_dir / "CMakeCache.txt").read_text().splitlines():
        match = re.match(r"([^#/][^:=]*):[A-Z]+=(.*)", line)
        if match:
            entries[match.group(1)] = match.group(2)
    return entries


def run(command):
    print("+", " ".join(map(str, command)), flush=True)
    try:
        subprocess.run([str(c) for c in command], check=True)
    except FileNotFoundError:
        fail(f"'{command[0]}' is not installed; install Debian's cmake and ninja-build "
             f"(scripts/install-deps.sh), or name a built tree with PARITY_BUILD_DIR")
    except subprocess.CalledProcessError as e:
        fail(f"'{' '.join(map(str, command))}' exited with status {e.returncode} (its output "
             f"is above)")


def jobs():
    value = os.environ.get("PARITY_JOBS", "")
    if value and not value.isdigit():
        fail(f"PARITY_JOBS='{value}' is not a number of parallel jobs; give e.g. PARITY_JOBS=2")
    return value or str(os.cpu_count() or 1)


def reused_build_dir():
    """The tree PARITY_BUILD_DIR names, checked to be this checkout's; None when not set."""
    value = os.environ.get("PARITY_BUILD_DIR", "")
    if not value:
        return None
    build_dir = Path(value).resolve()
    if not (build_dir / "CMakeCache.txt").is_file():
        fail(f"PARITY_BUILD_DIR='{value}' is not a configured CMake build tree (it has no "
             f"CMakeCache.txt); configure it with 'cmake -S {ROOT} -B {value} -G Ninja', or "
             f"unset PARITY_BUILD_DIR to build in {FRESH_BUILD_DIR}")
    cache = cmake_cache(build_dir)
    source = cache.get("CMAKE_HOME_DIRECTORY", "")
    if not source or Path(source).resolve() != ROOT:
        fail(f"PARITY_BUILD_DIR='{value}' was configured from the source tree '{source}', not "
             f"from {ROOT}: its module and command would not match this checkout's Python "
             f"files; name a build tree of {ROOT}, or unset PARITY_BUILD_DIR")
    if cache.get("PARITY_BUILD_PYTHON", "ON").upper() in ("OFF", "0", "FALSE", "NO"):
        fail(f"PARITY_BUILD_DIR='{value}' was configured with -DPARITY_BUILD_PYTHON=OFF, so it "
             f"builds no Python module; reconfigure it with -DPARITY_BUILD_PYTHON=ON")
    return build_dir


def configure_fresh_build():
    run(["cmake", "-S", ROOT, "-B", FRESH_BUILD_DIR, "-G", "Ninja",
         "-DCMAKE_BUILD_TYPE=Release", "-DPARITY_BUILD_TESTS=OFF", "-DPARITY_BUILD_BENCH=OFF",
         f"-DPARITY_PYTHON_EXECUTABLE={sys.executable}"])
    return FRESH_BUILD_DIR


def built_module(build_dir):
    """The extension module in the build tree, checked to be built for this interpreter."""
    wanted = build_dir / "python" / "parity" / ("_parity" + sysconfig.get_config_var("EXT_SUFFIX"))
    if wanted.is_file():
        return wanted
    others = sorted(p.name for p in wanted.parent.glob("_parity*.so"))
    python = cmake_cache(build_dir).get("PARITY_PYTHON_EXECUTABLE", "?")
    fail(f"the build tree {build_dir} holds no {wanted.name}, the module this interpreter "
         f"({sys.executable}, Python {sys.version.split()[0]}) loads; it holds "
         f"{others or 'no module'}, built for -DPARITY_PYTHON_EXECUTABLE={python}; run pip with "
         f"that interpreter, or reconfigure the tree with -DPARITY_PYTHON_EXECUTABLE="
         f"{sys.executable}")


class FreshBuildPy(build_py):
    """Empties the package's staging folder first: setuptools keeps what earlier builds put
    there, and the wheel would carry it (a Python file deleted since, say)."""

    def run(self):
        shutil.rmtree(Path(self.build_lib) / "parity", ignore_errors=True)
        super().run()


class CMakeBuild(build_ext):
    """Builds (or reuses) the CMake targets and copies them where the wheel takes them from."""

    def run(self):
        build_dir = reused_build_dir() or configure_fresh_build()
        run(["cmake", "--build", build_dir, "-j", jobs(), "--target", *TARGETS])
        built_version = cmake_cache(build_dir).get("CMAKE_PROJECT_VERSION")
        if built_version != VERSION:
            fail(f"the build tree {build_dir} is of Parity {built_version}, the checkout of "
                 f"{VERSION}; reconfigure it (cmake -S {ROOT} -B {build_dir})")
        module_dest = Path(self.get_ext_fullpath("parity._parity"))
        module_dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built_module(build_dir), module_dest)
        exe_dest = module_dest.parent / "_bin" / "parity"
        exe_dest.parent.mkdir(exist_ok=True)
        shutil.copy2(build_dir / "parity", exe_dest)  # keeps the executable bit for the wheel
        print(f"Packaged {module_dest.name} and the parity command from {build_dir}; ONNX "
              f"Runtime is not bundled (found at run time: --ort-lib, PARITY_ORT_LIB, ...)",
              flush=True)


def check_build_tools():
    # --no-build-isolation installs nothing and skips pip's check of pyproject.toml's
    # build-system.requires, so a missing one would surface as "invalid command 'bdist_wheel'".
    import setuptools

    missing = []
    if int(setuptools.__version__.split(".")[0]) < 66:
        missing.append(f"setuptools>=66 (it has {setuptools.__version__})")
    try:
        import wheel  # noqa: F401
    except ImportError:
        missing.append("wheel")
    if missing:
        fail(f"the Python building it ({sys.executable}) lacks {' and '.join(missing)}, and "
             f"--no-build-isolation installs nothing; build with Debian's /usr/bin/python3 "
             f"(python3-setuptools, python3-wheel) or a venv made with --system-site-packages")


check_build_tools()
VERSION = cmake_project_version()
(FRESH_BUILD_DIR / "setuptools").mkdir(parents=True, exist_ok=True)

setup(
    version=VERSION,
    # Built by CMakeBuild, not by setuptools' compiler; listing it makes the wheel platform-
    # and interpreter-specific, as a compiled module must be.
    ext_modules=[Extension("parity._parity", sources=[])],
    cmdclass={"build_py": FreshBuildPy, "build_ext": CMakeBuild},
    # setuptools' own scratch space, kept out of CMake's build/ folder.
    options={"build": {"build_base": str(FRESH_BUILD_DIR / "setuptools")},
             "egg_info": {"egg_base": str(FRESH_BUILD_DIR / "setuptools")}},
)
