"""manifest stage: read, validate, migrate and write ``build.toml``.

``load_manifest(kernel_dir)`` / ``parse_manifest(text)`` return the edition-5 model
(``kernelkit.manifest.model``) or raise ``ManifestError`` listing every problem with its line
and field; ``update_build(kernel_dir)`` rewrites an older edition as edition 5;
``dump_manifest(manifest)`` is the TOML writer.
"""

from kernelkit.manifest.dump import dump_manifest
from kernelkit.manifest.migrate import update_build
from kernelkit.manifest.model import Manifest
from kernelkit.manifest.parse import load_manifest, parse_manifest, read_manifest

__all__ = [
    "Manifest",
    "dump_manifest",
    "load_manifest",
    "parse_manifest",
    "read_manifest",
    "update_build",
]
