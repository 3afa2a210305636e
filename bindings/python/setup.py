"""Makes the wheel platform-specific but interpreter-independent.

fdk_ct is pure Python over ctypes, so setuptools would build ``py3-none-any``
and install it as purelib. It carries libfdk.so for one platform, so it must
say so: the files go to platlib (auditwheel refuses shared libraries in
purelib) and the tag is ``py3-none-<platform>``, since any CPython 3 can load
the library through ctypes.
"""

from setuptools import Distribution, setup
from setuptools.command.bdist_wheel import bdist_wheel


class BinaryDistribution(Distribution):
    # Nothing is compiled; this only tells install and bdist_wheel that the
    # package holds platform code (libfdk.so in fdk_ct/_lib).
    def has_ext_modules(self) -> bool:
        return True


class PlatformWheel(bdist_wheel):
    def get_tag(self) -> "tuple[str, str, str]":
        platform = super().get_tag()[2]
        return "py3", "none", platform


setup(distclass=BinaryDistribution, cmdclass={"bdist_wheel": PlatformWheel})
