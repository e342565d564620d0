"""The wheel's build step for packages whose folder lies elsewhere (pyproject.toml's cmdclass).

`[tool.setuptools.packages.find]` finds packages by walking folders, so a package that
`[tool.setuptools] package-dir` maps onto another folder (the top-level resources/ is
explorer.resources inside the wheel) is never found. This build_py builds every such mapped
package as well; it runs only when a wheel is built, never at the app's run time.
"""
from setuptools.command.build_py import build_py


class BuildPy(build_py):
    def finalize_options(self):
        super().finalize_options()
        mapped = [name for name in (self.package_dir or {}) if name and name not in self.packages]
        if mapped:
            self.packages = [*self.packages, *mapped]
