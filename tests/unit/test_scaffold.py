"""kernelkit init: names, the template mechanism, rendered files, writing, git."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kernelkit.cli.main import main
from kernelkit.errors import KernelkitError
from kernelkit.scaffold import (
    ScaffoldExistsError,
    TemplateError,
    available_templates,
    init_project,
    load_template,
    parse_project_name,
    plan_project,
    render,
    resolve_target,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

GOLDEN = Path(__file__).parent.parent / "data" / "scaffold" / "img2gray"

EXPECTED_BUILD_TOML = '''\
[general]
name = "img2gray"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda"]

[general.hub]
repo-id = "kernelkit-examples/img2gray"

[torch]
src = ["torch-ext/torch_binding.cpp", "torch-ext/torch_binding.h"]

[kernel.img2gray]
backend = "cuda"
depends = ["torch"]
src = ["img2gray_cuda/img2gray.cu"]

[kernel.img2gray_cpu]
backend = "cpu"
depends = ["torch"]
src = ["img2gray_cpu/img2gray_cpu.cpp"]
'''

ALL_FILES = {
    ".gitignore", "CARD.md", "README.md", "benchmarks/benchmark_img2gray.py", "build.toml",
    "flake.nix", "img2gray_cpu/img2gray_cpu.cpp", "img2gray_cuda/img2gray.cu", "tests/__init__.py",
    "tests/test_img2gray.py", "torch-ext/img2gray/__init__.py", "torch-ext/torch_binding.cpp",
    "torch-ext/torch_binding.h",
}


# --- renderer ---------------------------------------------------------------------------------


def test_render_substitutes_and_leaves_other_braces() -> None:
    text = "a {{ name }} b {{python_name}} c {{ x.y }} {% if %} dim3{{1, 2}}"
    out = render(text, {"name": "my-k", "python_name": "my_k"})
    assert out == "a my-k b my_k c {{ x.y }} {% if %} dim3{{1, 2}}"


def test_render_unknown_placeholder_is_an_error() -> None:
    with pytest.raises(TemplateError, match=r"undefined placeholder.*missing"):
        render("{{ missing }}", {"name": "x"}, where="t.tmpl")


# --- names ------------------------------------------------------------------------------------


def test_parse_project_name() -> None:
    info = parse_project_name("Acme/My_Kernel")
    assert (info.owner, info.name, info.python_name, info.class_name) == (
        "Acme", "my-kernel", "my_kernel", "MyKernel")
    assert info.repo_id == "Acme/my-kernel"
    bare = parse_project_name("img2gray")
    assert bare.repo_id == "kernelkit-examples/img2gray"


@pytest.mark.parametrize("bad", ["a/b/c", "/x", "org/", "org/9lives", "org/bad-", "org/x"])
def test_parse_project_name_rejects(bad: str) -> None:
    with pytest.raises(KernelkitError):
        parse_project_name(bad)


def test_resolve_target(tmp_path: Path) -> None:
    dest, info = resolve_target(None, "acme/gray", tmp_path)
    assert (dest, info.repo_id) == (tmp_path / "gray", "acme/gray")
    dest, info = resolve_target("somewhere/deep/dir", "acme/gray", tmp_path)
    assert (dest, info.repo_id) == (tmp_path / "somewhere/deep/dir", "acme/gray")
    dest, info = resolve_target("acme/gray", None, tmp_path)  # PATH parsed as owner/repo
    assert (dest, info.repo_id) == (tmp_path / "gray", "acme/gray")
    dest, info = resolve_target("x/y/my-kernel", None, tmp_path)
    assert (dest, info.repo_id) == (tmp_path / "x/y/my-kernel", "kernelkit-examples/my-kernel")
    cwd = tmp_path / "img2gray"
    cwd.mkdir()
    dest, info = resolve_target(None, None, cwd)
    assert (dest, info.repo_id) == (cwd, "kernelkit-examples/img2gray")


# --- templates and rendered files ---------------------------------------------------------------


def test_img2gray_template_is_available() -> None:
    assert "img2gray" in available_templates()
    tmpl = load_template("img2gray")
    assert tmpl.backends == ("cpu", "cuda")
    with pytest.raises(TemplateError, match="unknown template"):
        load_template("nope")


def test_default_files_and_build_toml() -> None:
    files = plan_project()
    assert set(files) == ALL_FILES
    assert files["build.toml"] == EXPECTED_BUILD_TOML
    assert files["build.toml"] == (GOLDEN / "build.toml").read_text()
    assert files["torch-ext/torch_binding.cpp"] == (
        GOLDEN / "torch-ext__torch_binding.cpp").read_text()
    assert files["flake.nix"] == (GOLDEN / "flake.nix").read_text()
    assert files[".gitignore"].split() == ["build", "_cmake_build", "*.egg-info", "__pycache__"]


def test_build_toml_parses_and_lists_each_source_that_exists() -> None:
    for backends in (["cpu"], ["cuda"], ["cuda", "cpu"]):
        files = plan_project(name="acme/my-gray", backends=backends)
        data = tomllib.loads(files["build.toml"])
        assert data["general"]["name"] == "my-gray"
        assert data["general"]["edition"] == 5
        assert data["general"]["backends"] == sorted(backends)
        assert data["general"]["hub"]["repo-id"] == "acme/my-gray"
        kernels = data["kernel"]
        assert {k["backend"] for k in kernels.values()} == set(backends)
        for comp in kernels.values():
            assert comp["depends"] == ["torch"]
            assert all(src in files for src in comp["src"])
        assert all(src in files for src in data["torch"]["src"])


def test_cpu_only_project_has_no_cuda_sources() -> None:
    files = plan_project(backends=["cpu"])
    assert "img2gray_cuda/img2gray.cu" not in files
    assert "img2gray_cpu/img2gray_cpu.cpp" in files


def test_names_flow_into_every_file() -> None:
    files = plan_project(name="acme/luma_fast")
    assert "torch-ext/luma_fast/__init__.py" in files
    assert "luma_fast_cuda/luma_fast.cu" in files
    init = files["torch-ext/luma_fast/__init__.py"]
    assert '__all__ = ["luma_fast"]' in init
    assert 'register_fake(add_op_namespace_prefix("luma_fast"))' in init
    assert 'register_fake(add_op_namespace_prefix("luma_fast.out"))' in init
    assert "return ops.luma_fast.default(image)" in init  # a thin wrapper: checks are in C++
    # acme is not a trusted publisher: the card's line must say so, or it raises TrustError
    load = 'kernelkit.get_kernel("acme/luma-fast", version=1, trust_remote_code=True)'
    assert load in files["CARD.md"] and load in files["README.md"]
    assert not any("{{" in text and "python_name" in text for text in files.values())


def test_card_usage_line_loads_for_its_readers() -> None:
    """Issue 27: the card's usage line is the one `get_kernel` accepts: trust_remote_code=True
    for every publisher but the trusted ones, none for those."""
    from kernelkit.util.usage import DEFAULT_TRUSTED_PUBLISHERS

    trusted = DEFAULT_TRUSTED_PUBLISHERS[0]
    for template in ("img2gray", "activation"):
        card = plan_project(name=f"{trusted}/relu", template=template)["CARD.md"]
        assert f'kernelkit.get_kernel("{trusted}/relu", version=1)' in card
        card = plan_project(name="someone/relu", template=template)["CARD.md"]
        assert 'kernelkit.get_kernel("someone/relu", version=1, trust_remote_code=True)' in card


def test_generated_python_is_valid_and_registers_with_prefix() -> None:
    from kernelkit.check.ops_rules import unprefixed_registrations

    files = plan_project()
    for rel, text in files.items():
        if rel.endswith(".py"):
            compile(text, rel, "exec")
            assert unprefixed_registrations(text, rel) == []


def test_kernel_sources_pin_the_float_math() -> None:
    files = plan_project()
    cu = files["img2gray_cuda/img2gray.cu"]
    for needle in ("__fmul_rn", "__fadd_rn", "getCurrentCUDAStream", "CUDAGuard",
                   "C10_CUDA_KERNEL_LAUNCH_CHECK", "dim3 block(kBlockX, kBlockY)"):
        assert needle in cu
    cpp = files["img2gray_cpu/img2gray_cpu.cpp"]
    assert "at::parallel_for" in cpp and "fp-contract=off" in cpp
    binding = files["torch-ext/torch_binding.cpp"]
    assert 'ops.def("img2gray(Tensor input) -> Tensor")' in binding
    assert 'ops.def("img2gray.out(Tensor input, Tensor! out) -> ()")' in binding
    assert '"img2gray: image must have dtype torch.uint8, got "' in binding
    assert "REGISTER_EXTENSION(TORCH_EXTENSION_NAME)" in binding


@pytest.mark.parametrize("template", ["img2gray", "activation", "blank"])
def test_kernel_sources_include_no_umbrella_header(template: str) -> None:
    # An umbrella header (<ATen/ATen.h>, <torch/all.h>, ...) declares every torch operator; in
    # a .cu file cudafe++ and cicc parse it once per architecture. Measured on one H200 host:
    # the img2gray CUDA variant for ten architectures, 31.7 s cold with it, 19.3 s without
    # (benchmarks/results/gpu/build_cache_cuda_same_host_{umbrella,lean}.json).
    from kernelkit.builder.compile.source_cost import umbrella_includes

    files = plan_project(template=template, backends=["cuda", "cpu"])
    sources = {rel: text for rel, text in files.items()
               if rel.endswith((".cu", ".cpp", ".h", ".cuh"))}
    assert any(rel.endswith(".cu") for rel in sources)
    for rel, text in sources.items():
        assert umbrella_includes(text) == [], rel
    cu = next(text for rel, text in sources.items() if rel.endswith(".cu"))
    assert "<c10/cuda/CUDAStream.h>" in cu and "c10::cuda::getCurrentCUDAStream()" in cu


def test_unsupported_backend_is_refused() -> None:
    with pytest.raises(TemplateError, match=r"no sources for backend.*rocm"):
        plan_project(backends=["rocm"])
    assert set(plan_project(backends=["all"])) == ALL_FILES


def test_a_new_template_directory_needs_no_code(tmp_path: Path) -> None:
    tdir = tmp_path / "mini"
    (tdir / "frag").mkdir(parents=True)
    (tdir / "template.toml").write_text(
        '[template]\nbackends = ["cpu", "cuda"]\ndefault-backends = ["cpu"]\n'
        '[[file]]\nsrc = "a.tmpl"\ndest = "{{python_name}}.txt"\n'
        '[[file]]\nsrc = "b.tmpl"\ndest = "gpu/{{name}}.cu"\nbackends = ["cuda"]\n'
        '[fragment.parts]\ncuda = "frag/cuda.tmpl"\ncpu = "frag/cpu.tmpl"\n')
    (tdir / "a.tmpl").write_text("{{repo_id}} [{{backends_toml}}]\n{{parts}}\n")
    (tdir / "b.tmpl").write_text("// {{class_name}}\n")
    (tdir / "frag" / "cuda.tmpl").write_text("cuda-part\n")
    (tdir / "frag" / "cpu.tmpl").write_text("cpu-part\n")
    assert available_templates(tmp_path) == ["mini"]
    files = plan_project(name="o/my-k", template="mini", templates_dir=tmp_path, backends=None)
    assert files == {"my_k.txt": 'o/my-k ["cpu"]\ncpu-part\n'}
    files = plan_project(name="o/my-k", template="mini", templates_dir=tmp_path,
                         backends=["cuda", "cpu"])
    assert files["my_k.txt"] == 'o/my-k ["cpu", "cuda"]\ncuda-part\n\ncpu-part\n'
    assert files["gpu/my-k.cu"] == "// MyK\n"


def test_broken_template_description_is_reported(tmp_path: Path) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "template.toml").write_text(
        '[template]\nbackends = ["cpu"]\n[[file]]\nsrc = "missing.tmpl"\ndest = "x"\n')
    with pytest.raises(TemplateError, match=r"missing.tmpl does not exist"):
        load_template("bad", tmp_path)


# --- writing ----------------------------------------------------------------------------------


def test_init_refuses_to_overwrite_and_lists_files(tmp_path: Path) -> None:
    dest = tmp_path / "p"
    (dest / "torch-ext").mkdir(parents=True)
    (dest / "build.toml").write_text("mine")
    (dest / "torch-ext" / "torch_binding.h").write_text("mine")
    (dest / "notes.txt").write_text("keep")
    with pytest.raises(ScaffoldExistsError) as info:
        init_project(dest, git=False)
    assert info.value.existing == ["build.toml", "torch-ext/torch_binding.h"]
    assert "build.toml" in str(info.value) and "--overwrite" in str(info.value)
    assert (dest / "build.toml").read_text() == "mine"
    assert not (dest / "flake.nix").exists()  # nothing was written
    init_project(dest, git=False, overwrite=True)
    assert (dest / "build.toml").read_text() == EXPECTED_BUILD_TOML
    assert (dest / "notes.txt").read_text() == "keep"


def test_cli_init(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init", "--name", "acme/gray-cpu", "--backends", "cpu", "--no-git"]) == 0
    assert "Initialized acme/gray-cpu" in capsys.readouterr().out
    data = tomllib.loads((tmp_path / "gray-cpu" / "build.toml").read_text())
    assert data["general"]["backends"] == ["cpu"]
    assert list(data["kernel"]) == ["gray_cpu_cpu"]
    assert main(["init", "--name", "acme/gray-cpu", "--backends", "cpu", "--no-git"]) == 1
    assert "already exist" in capsys.readouterr().err


def test_the_blank_and_triton_templates() -> None:
    """`init --template blank`: the project docs/authoring.md walks through (each backend's
    kernel registers itself with TORCH_LIBRARY_IMPL_EXPAND); `--template triton`: noarch."""
    assert {"blank", "triton"} <= set(available_templates())
    blank = plan_project(template="blank", backends=["cpu"], name="my-org/scale-add")
    assert "TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, CPU, ops)" in \
        blank["scale_add_cpu/scale_add_cpu.cpp"]
    assert not any(rel.endswith(".cu") for rel in blank)
    assert "benchmarks/bench_scale_add.py" in blank
    triton = plan_project(template="triton", backends=["cpu", "cuda"], name="my-org/tri-add")
    assert "[torch-noarch]" in triton["build.toml"] and "[torch]" not in triton["build.toml"]
    init = triton["torch-ext/tri_add/__init__.py"]
    assert 'custom_op(add_op_namespace_prefix("tri_add")' in init
    assert "torch.add(x, y, alpha=alpha)" in init  # the fallback without triton or a GPU
