"""Write one wheel from one variant directory.

The package directory inside the wheel is ``WheelSpec.package`` (``img2gray/``, from the
repository name): a flat variant (``__init__.py`` at its top) is re-rooted there, a legacy
nested variant's ``<variant>/<python_name>/`` becomes it. ``metadata.json`` travels inside the
package. Bytecode is skipped. Archives are reproducible: sorted entries, fixed timestamps
(``SOURCE_DATE_EPOCH`` when passed), ``.dist-info`` last, RECORD with SHA-256 of every file.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

from kernelkit._version import __version__
from kernelkit.artifact.metadata import Metadata
from kernelkit.errors import KernelkitError
from kernelkit.lock.hashing import locked_files
from kernelkit.util.fs import temp_sibling
from kernelkit.util.quote import email_header_value
from kernelkit.wheel.naming import (
    KERNEL_RECORD,
    WheelTags,
    distribution_name,
    full_version,
    wheel_filename,
)

_EPOCH_1980 = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class WheelSpec:
    name: str  # project (distribution) name: the repository's name
    package: str  # the top-level import package (naming.check_package_name)
    version: str  # public version, e.g. "1.2.0"
    tags: WheelTags
    summary: str = ""
    license: str = ""
    repo_id: str = ""  # the kernel repository (written to .dist-info/kernelkit.json)
    commit: str = ""


def package_files(variant_dir: Path, python_name: str,
                  package: str | None = None) -> list[tuple[str, Path]]:
    """``(path inside the wheel, file)`` for every file of the variant, under ``package``
    (default ``python_name``); a legacy nested variant's ``<python_name>/`` becomes it."""
    package = package or python_name
    files = locked_files(variant_dir)
    if (variant_dir / "__init__.py").is_file():
        return [(f"{package}/{rel}", p) for rel, p in files]
    if (variant_dir / python_name / "__init__.py").is_file():
        inner = f"{python_name}/"
        return [(f"{package}/{rel[len(inner):] if rel.startswith(inner) else rel}", p)
                for rel, p in files]
    raise KernelkitError(f"{variant_dir}: no __init__.py (neither flat nor {python_name}/)",
                         hint="is this a kernel build variant?")


def metadata_text(spec: WheelSpec) -> str:
    """The core metadata; every value from the hub through ``email_header_value``."""
    lines = ["Metadata-Version: 2.1", f"Name: {email_header_value(spec.name)}",
             f"Version: {email_header_value(full_version(spec.version, spec.tags))}"]
    if spec.summary:
        lines.append(f"Summary: {email_header_value(spec.summary)}")
    if spec.license:
        lines.append(f"License: {email_header_value(spec.license)}")
    lines += ["Requires-Python: >=3.9", f"Requires-Dist: {spec.tags.torch_requirement}"]
    return "\n".join(lines) + "\n"


def wheel_text(spec: WheelSpec) -> str:
    purelib = "true" if spec.tags.purelib else "false"
    return (f"Wheel-Version: 1.0\nGenerator: kernelkit {__version__}\n"
            f"Root-Is-Purelib: {purelib}\nTag: {spec.tags.tag}\n")


def record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _zipinfo(path: str, mode: int, date: tuple[int, int, int, int, int, int]) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(path, date_time=date)
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def write_wheel(variant_dir: Path, spec: WheelSpec, dest: Path,
                date: tuple[int, int, int, int, int, int] = _EPOCH_1980) -> Path:
    """Write the wheel of ``variant_dir`` into ``dest``; return its path."""
    meta = Metadata.read(variant_dir / "metadata.json")
    dist_info = f"{distribution_name(spec.name)}-{full_version(spec.version, spec.tags)}.dist-info"
    entries: list[tuple[str, bytes, int]] = []
    for arc, p in sorted(package_files(variant_dir, meta.python_name, spec.package)):
        mode = 0o755 if p.stat().st_mode & 0o111 else 0o644
        entries.append((arc, p.read_bytes(), mode))
    entries.append((f"{dist_info}/METADATA", metadata_text(spec).encode(), 0o644))
    entries.append((f"{dist_info}/WHEEL", wheel_text(spec).encode(), 0o644))
    if spec.repo_id:  # lets a later to-wheel of the same kernel replace this one
        record_json = {"repo_id": spec.repo_id, "commit": spec.commit, "variant": variant_dir.name}
        entries.append((f"{dist_info}/{KERNEL_RECORD}",
                        (json.dumps(record_json, indent=2) + "\n").encode(), 0o644))
    record = "".join(record_line(a, d) + "\n" for a, d, _ in entries) + f"{dist_info}/RECORD,,\n"
    entries.append((f"{dist_info}/RECORD", record.encode(), 0o644))
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / wheel_filename(spec.name, spec.version, spec.tags)
    tmp = temp_sibling(out)
    with zipfile.ZipFile(tmp, "w") as zf:
        for arc, data, mode in entries:
            zf.writestr(_zipinfo(arc, mode, date), data)
    tmp.replace(out)
    return out
