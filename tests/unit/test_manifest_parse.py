"""Valid manifests give the right model; versions, git URLs and the line locator behave."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelkit.errors import ManifestError
from kernelkit.manifest import load_manifest, parse_manifest
from kernelkit.manifest.deps import (
    all_kernel_depends,
    python_dependency_ids,
    python_depends_for,
    python_packages,
)
from kernelkit.manifest.locate import LineIndex
from kernelkit.manifest.model import (
    KernelDependency,
    Manifest,
    TorchFramework,
    TorchNoarch,
    TvmFfi,
    Version,
)
from kernelkit.manifest.values import git_url_error

DATA = Path(__file__).resolve().parents[1] / "data" / "manifests"


def parse(name: str) -> Manifest:
    path = DATA / name
    return parse_manifest(path.read_text(), path, check_sources=False)


def test_img2gray_model() -> None:
    m = parse("valid_img2gray.toml")
    assert m.general.name == "img2gray" and m.general.python_name == "img2gray"
    assert (m.general.version, m.general.license) == (1, "Apache-2.0")
    assert m.general.backends == ("cpu", "cuda")
    assert m.general.hub.repo_id == "kernelkit-examples/img2gray"
    assert m.general.hub.branch is None
    assert isinstance(m.framework, TorchFramework)
    assert m.framework.src == ("torch-ext/torch_binding.cpp", "torch-ext/torch_binding.h")
    assert m.framework.pyext == ("py", "pyi") and m.framework.stable_abi is None
    assert [(k.name, k.backend) for k in m.kernels] == [("img2gray", "cuda"),
                                                        ("img2gray_cpu", "cpu")]
    assert m.kernels_for("cuda")[0].src == ("img2gray_cuda/img2gray.cu",)
    assert m.kernels[0].cuda_capabilities is None
    assert (m.source_edition, m.warnings) == (5, ())
    assert m.path == DATA / "valid_img2gray.toml" and m.root == DATA


def test_noarch_model() -> None:
    m = parse("valid_noarch.toml")
    assert isinstance(m.framework, TorchNoarch)
    assert m.framework.cuda_capabilities == ("8.0", "9.0a", "10.0+PTX")
    assert m.framework.rocm_archs == ("gfx90a", "gfx942")
    assert m.kernels == ()
    assert m.general.python_depends == ("einops",)


def test_tvm_ffi_model() -> None:
    m = parse("valid_tvm_ffi.toml")
    assert isinstance(m.framework, TvmFfi)
    assert m.framework.include == ("tvm-ffi-ext",) and m.framework.cxx_flags == ("-O3",)
    relu, relu_xpu = m.kernels
    assert relu.depends == () and relu.cuda_flags == ("--use_fast_math",)
    assert relu.cuda_capabilities == ("7.5", "8.0", "9.0+PTX")
    assert relu_xpu.sycl_flags == ("-fsycl-targets=spir64",)


def test_other_backends_model() -> None:
    m = parse("valid_other_backends.toml")
    g = m.general
    assert g.backends == ("cuda", "rocm", "xpu", "metal", "neuron", "tpu")
    assert g.upstream == "git@github.com:example/relu.git"  # kept as written
    assert g.kernel_depends == (
        KernelDependency("kernels-community/activation", version=1),
        KernelDependency("kernels-community/rotary", revision="abc123"),
    )
    assert g.cuda is not None and g.cuda.minver == Version((12, 6))
    assert str(g.cuda.maxver) == "13"  # "13.0": trailing zeros dropped
    assert g.tpu is not None and g.tpu.python_depends == ()
    assert isinstance(m.framework, TorchFramework)
    assert m.framework.stable_abi == {"cuda": Version((2, 11)), "rocm": Version((2, 12))}
    assert m.framework.stable_abi_for("cuda") == Version((2, 11))
    assert m.framework.stable_abi_for("xpu") is None
    assert m.framework.pyext == ("py", "json")
    rocm = m.kernels_for("rocm")[0]
    assert rocm.rocm_archs is not None and "gfx942" in rocm.rocm_archs
    assert rocm.hip_flags == ("-ffast-math",)
    assert m.kernels_for("cuda")[0].cuda_minver == Version((12, 8))
    assert m.kernels_for("metal")[0].depends == ("torch", "metal-cpp")
    assert [d.repo_id for d in all_kernel_depends(g)] == [
        "kernels-community/activation", "kernels-community/rotary",
        "kernels-community/xpu-utils"]
    assert python_depends_for(g, "cuda") == ("nvidia-cutlass-dsl",)
    assert python_depends_for(g, "neuron") == ("nki",)
    assert python_depends_for(g, "metal") == ()


def test_v4_is_accepted_with_a_warning() -> None:
    m = parse("v4.toml")
    assert m.source_edition == 4
    [warning] = m.warnings
    assert "kernelkit update-build" in warning
    assert isinstance(m.framework, TorchFramework)
    assert m.framework.stable_abi == Version((2, 11))
    assert m.general.source == "https://github.com/example/relu-kernel"


def test_load_manifest_checks_sources_of_a_complete_project(tmp_path: Path) -> None:
    (tmp_path / "build.toml").write_text((DATA / "valid_img2gray.toml").read_text())
    with pytest.raises(ManifestError) as info:
        load_manifest(tmp_path)
    assert len(info.value.problems) == 4  # 2 binding files + 2 kernel sources
    for rel in ("torch-ext/torch_binding.cpp", "torch-ext/torch_binding.h",
                "img2gray_cuda/img2gray.cu", "img2gray_cpu/img2gray_cpu.cpp"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    m = load_manifest(tmp_path)
    assert m.path == tmp_path / "build.toml" and m.root == tmp_path
    assert load_manifest(tmp_path / "build.toml").general.name == "img2gray"


def test_backends_beyond_cpu_and_cuda_parse_without_complaint() -> None:
    m = parse("valid_other_backends.toml")
    assert {k.backend for k in m.kernels} == {"cuda", "rocm", "xpu", "metal"}


# --- versions (spec §1.3) -------------------------------------------------------------------


@pytest.mark.parametrize(("text", "parts", "shown"), [
    ("2.11", (2, 11), "2.11"),
    ("12.8", (12, 8), "12.8"),
    ("2.0", (2,), "2"),
    ("12.0.0", (12,), "12"),
    ("0", (0,), "0"),
    ("2026.0.1", (2026, 0, 1), "2026.0.1"),
])
def test_version_parse(text: str, parts: tuple[int, ...], shown: str) -> None:
    version = Version.parse(text)
    assert version.parts == parts and str(version) == shown


@pytest.mark.parametrize("text", ["", "2.x", "2..1", "2.", ".2", " 2", "-1", "+2", "2.1-rc1",
                                  "v2", "\u0662.1"])
def test_version_parse_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="invalid version"):
        Version.parse(text)


def test_version_order_is_numeric_and_ignores_trailing_zeros() -> None:
    assert Version.parse("2.9") < Version.parse("2.11")
    assert Version.parse("2.0") == Version.parse("2")
    assert Version.parse("12") < Version.parse("12.0.1") < Version.parse("12.1")
    assert max(map(Version.parse, ["2.12", "2.9", "2.13"])) == Version.parse("2.13")


# --- git URLs -------------------------------------------------------------------------------


@pytest.mark.parametrize("url", [
    "https://github.com/org/repo", "https://github.com/org/repo.git",
    "http://github.com/org/repo.git", "git://github.com/org/repo.git",
    "ssh://git@github.com/org/repo.git", "git+ssh://git@github.com/org/repo.git",
    "git+https://github.com/org/repo.git", "git@github.com:org/repo.git",
    "user@gitlab.com:group/project.git",
])
def test_git_url_accepted(url: str) -> None:
    assert git_url_error(url) is None


@pytest.mark.parametrize("url", [
    "ftp://example.com/repo.git", "file:///home/user/repo", "not a url",
    "git@github.com:/abs/path", "https:///no-host", "github.com",
])
def test_git_url_rejected(url: str) -> None:
    assert git_url_error(url) is not None


# --- python dependency table ----------------------------------------------------------------


def test_python_dependency_table() -> None:
    assert python_dependency_ids() == ("einops", "helion", "tvm-ffi")
    assert python_dependency_ids("cuda") == ("nvidia-cutlass-dsl",)
    assert python_dependency_ids("cpu") == ()
    assert python_dependency_ids("tpu") is None
    [pkg] = python_packages("tvm-ffi")
    assert (pkg.pkg, pkg.import_name) == ("apache-tvm-ffi", "tvm_ffi")
    [onednn] = python_packages("onednn", "xpu")
    assert (onednn.pkg, onednn.import_name) == ("onednn-devel", None)


# --- line locator ---------------------------------------------------------------------------


def test_line_index_finds_tables_keys_elements_and_inline_tables() -> None:
    text = '''# comment with [brackets] and key = "value"
[general]
name = "x"  # trailing = comment
backends = [
  "cpu",  # a, b]
  'cuda',
]
hub = { repo-id = "a/b", branch = "main" }
doc = """
[not.a.table]
fake = 1
"""

[[general.kernel-depends]]
repo-id = "a/b"
[[general.kernel-depends]]
repo-id = "c/d"

[kernel."my.kernel"]
src = ["a.cu", "b.cu"]
'''
    index = LineIndex(text)
    assert index.line_of("general") == 2
    assert index.line_of("general.name") == 3
    assert index.line_of("general.backends") == 4
    assert index.line_of("general.backends[1]") == 6
    assert index.line_of("general.hub.branch") == 8
    assert index.exact_line_of("not.a.table") is None
    assert index.line_of("general.kernel-depends[1].repo-id") == 17
    assert index.line_of("general.kernel-depends[0]") == 14
    assert index.line_of("kernel.my.kernel.src[1]") == 20
    # missing fields fall back to their closest parent
    assert index.line_of("general.license") == 2
    assert index.line_of("general.backends[7]") == 4
    assert index.line_of("torch.src") is None


def test_line_index_survives_text_it_does_not_understand() -> None:
    index = LineIndex('[general]\nname = "x"\n= broken\n[torch]\n')
    assert index.line_of("general.name") == 2
    assert index.line_of("torch") is None
