"""update_build (v3/v4 -> v5, spec §1.5) and the TOML writer dump_manifest."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from kernelkit.errors import ManifestError
from kernelkit.manifest import dump_manifest, load_manifest, parse_manifest, update_build
from kernelkit.manifest.model import (
    General,
    KernelComponent,
    KernelDependency,
    Manifest,
    TorchFramework,
    Version,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DATA = Path(__file__).resolve().parents[1] / "data" / "manifests"
VALID = [*sorted(DATA.glob("valid_*.toml")), DATA / "v4.toml"]

V4_AS_V5 = '''\
[general]
name = "relu"
version = 2
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda"]
source = "https://github.com/example/relu-kernel"

[general.cuda]
minver = "12.6"

[torch]
src = ["torch-ext/torch_binding.cpp", "torch-ext/torch_binding.h"]
stable-abi = "2.11"
cxx-flags = ["-O3"]

[kernel.relu]
backend = "cuda"
depends = ["torch"]
src = ["relu_cuda/relu.cu"]

[kernel.relu_cpu]
backend = "cpu"
depends = ["torch"]
src = ["relu_cpu/relu.cpp"]
'''

V3_AS_V5 = '''\
[general]
name = "old-relu"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cuda", "cpu"]
upstream = "https://github.com/example/relu"
python-depends = ["einops"]

[general.hub]
repo-id = "example/old-relu"

[torch-noarch]

[kernel.relu]
backend = "cuda"
depends = ["torch"]
src = ["relu_cuda/relu.cu"]
cuda-capabilities = ["8.0", "9.0"]
'''


def project(tmp_path: Path, name: str) -> Path:
    shutil.copy(DATA / name, tmp_path / "build.toml")
    return tmp_path


def test_v4_to_v5(tmp_path: Path) -> None:
    before = load_manifest(project(tmp_path, "v4.toml"), check_sources=False)
    assert update_build(tmp_path) is True
    text = (tmp_path / "build.toml").read_text()
    assert text == V4_AS_V5
    after = load_manifest(tmp_path, check_sources=False)
    assert (after.source_edition, after.warnings) == (5, ())
    assert (after.general, after.framework, after.kernels) == (
        before.general, before.framework, before.kernels)
    assert update_build(tmp_path) is False  # already edition 5: untouched
    assert (tmp_path / "build.toml").read_text() == text


def test_v3_to_v5(tmp_path: Path) -> None:
    project(tmp_path, "v3.toml")
    with pytest.raises(ManifestError, match="update-build"):
        load_manifest(tmp_path, check_sources=False)
    assert update_build(tmp_path) is True
    assert (tmp_path / "build.toml").read_text() == V3_AS_V5
    after = load_manifest(tmp_path, check_sources=False)
    assert after.general.version == 1  # v3 without version -> 1
    assert after.framework.kind == "torch-noarch"  # v3 without framework -> noarch


def test_v3_with_torch_table_keeps_it(tmp_path: Path) -> None:
    text = (DATA / "v3.toml").read_text().replace(
        "[general.hub]", '[torch]\nsrc = ["torch-ext/b.cpp"]\nminver = "2.0"\n\n[general.hub]')
    (tmp_path / "build.toml").write_text(text)
    assert update_build(tmp_path) is True
    m = load_manifest(tmp_path, check_sources=False)
    assert isinstance(m.framework, TorchFramework)
    assert m.framework.src == ("torch-ext/b.cpp",) and m.framework.minver == Version((2,))
    assert m.framework.stable_abi is None and m.framework.cxx_flags == ()


def test_v3_without_license_cannot_be_migrated(tmp_path: Path) -> None:
    original = project(tmp_path, "v3_no_license.toml").joinpath("build.toml").read_text()
    with pytest.raises(ManifestError) as info:
        update_build(tmp_path)
    assert any(p.field == "general.license" and "`license` key is required" in p.message
               for p in info.value.problems)
    assert (tmp_path / "build.toml").read_text() == original  # nothing written


def test_update_build_refuses_an_invalid_file_and_leaves_it(tmp_path: Path) -> None:
    text = (DATA / "v4.toml").read_text().replace('"torch"]', '"torchh"]', 1)
    (tmp_path / "build.toml").write_text(text)
    with pytest.raises(ManifestError):
        update_build(tmp_path)
    assert (tmp_path / "build.toml").read_text() == text


def test_update_build_without_build_toml(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="kernelkit init"):
        update_build(tmp_path)


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_dump_round_trips(path: Path) -> None:
    m = parse_manifest(path.read_text(), check_sources=False)
    text = dump_manifest(m)
    again = parse_manifest(text, check_sources=False)
    assert (again.general, again.framework, again.kernels) == (m.general, m.framework, m.kernels)
    assert again.source_edition == 5
    assert dump_manifest(again) == text  # stable
    assert tomllib.loads(text)["general"]["edition"] == 5


def test_dump_is_independent_of_the_source_key_order() -> None:
    a = (DATA / "valid_img2gray.toml").read_text()
    lines = a.splitlines()
    b = "\n".join([lines[0], *reversed(lines[1:6]), *lines[6:]]) + "\n"
    assert b != a
    assert dump_manifest(parse_manifest(a)) == dump_manifest(parse_manifest(b))


def test_dump_escapes_strings_and_quotes_odd_keys() -> None:
    m = Manifest(
        general=General(name="odd", version=0, license='Apache "2.0"\\\n\t', backends=("cuda",),
                        kernel_depends=(KernelDependency("a/b", revision="refs/pr/1"),)),
        framework=TorchFramework(src=("a b.cpp",), cxx_flags=("-DX=\"y\"",)),
        kernels=(KernelComponent(name="dotted.name", backend="cuda", src=("k\u00e9.cu",),
                                 depends=(), cuda_capabilities=()),),
    )
    text = dump_manifest(m)
    assert '[kernel."dotted.name"]' in text
    assert 'cuda-capabilities = []' in text
    parsed = parse_manifest(text)
    assert parsed.general == m.general
    assert parsed.framework == m.framework and parsed.kernels == m.kernels


def test_dump_wraps_long_arrays_one_item_per_line() -> None:
    srcs = tuple(f"csrc/a_rather_long_directory_name/file_number_{i}.cu" for i in range(4))
    m = Manifest(
        general=General(name="wide", version=1, license="MIT", backends=("cuda",)),
        framework=TorchFramework(),
        kernels=(KernelComponent(name="wide", backend="cuda", src=srcs, depends=("torch",)),),
    )
    text = dump_manifest(m)
    assert 'src = [\n    "csrc/a_rather_long_directory_name/file_number_0.cu",\n' in text
    assert all(len(line) <= 100 for line in text.splitlines())
    assert parse_manifest(text).kernels[0].src == srcs
