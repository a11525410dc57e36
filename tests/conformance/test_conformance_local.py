"""Local builds both ways: upstream's loader on kernelkit's build, kernelkit's loader (and
check) on the same build in upstream's newer layouts and names, and describe-api on both sides.

The compiled kernel is the session's img2gray build; layouts and names kernelkit does not
build (the 0.19 grammar, ``build-layout: zip``, backend ``agnostic``) are made from it (or from a
pure-Python variant) the way upstream's builder lays them out.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from kernelkit.variants.name import to_grammar
from tests.conformance.support import CHECK_IMG2GRAY, copy_variant, kernelkit_cli, kernelkit_run
from tests.helpers import make_variant, to_zip_layout
from tests.upstream_envs import UpstreamEnv

pytestmark = pytest.mark.slow  # the session's compiled img2gray build


def _upstream_loads(upstream: UpstreamEnv, path: Path) -> str:
    """Upstream's ``get_local_kernel`` on ``path``; its output (``CONFORMANCE-OK ...`` on
    success, else the error's last line)."""
    code = CHECK_IMG2GRAY + textwrap.dedent(f"""
        from pathlib import Path
        import kernels
        check(kernels.get_local_kernel(Path({str(path)!r})))
    """)
    proc = upstream.run(code)
    return proc.stdout if proc.returncode == 0 else "FAILED " + proc.stderr.strip()[-400:]


def _kernelkit_loads(path: Path) -> str:
    code = CHECK_IMG2GRAY + textwrap.dedent(f"""
        from pathlib import Path
        import kernelkit
        check(kernelkit.get_local_kernel(Path({str(path)!r})))
    """)
    proc = kernelkit_run(code)
    return proc.stdout if proc.returncode == 0 else "FAILED " + proc.stderr.strip()[-400:]


def test_their_loader_loads_our_build(upstream: UpstreamEnv, img2gray_cpu_build: Path) -> None:
    """Row "local build (files layout, legacy name)": upstream's get_local_kernel on the
    project kernelkit built, digest (with symbols.json) verified by 0.19.1 on the way."""
    project = img2gray_cpu_build.parent.parent
    out = _upstream_loads(upstream, project)
    assert out.startswith("CONFORMANCE-OK"), out
    assert str(img2gray_cpu_build) in out


def test_0_19_grammar_names(kernels_017: UpstreamEnv, kernels_019: UpstreamEnv,
                            img2gray_cpu_build: Path, tmp_path: Path) -> None:
    """Row "0.19-grammar variant name": the same build named
    ``torch-2.13-cxx11-cpu-cpython-3.9-abi3-x86_64-linux`` loads in kernelkit and 0.19.1;
    0.17.2 takes it for a noarch variant of an unknown backend and finds nothing to load.
    kernelkit check passes it (no variant-name, no extra-extension finding)."""
    from kernelkit.check import check_build

    new = to_grammar(img2gray_cpu_build.name, "0.19")
    assert new.startswith("torch-2.") and "-cpython-3.9-abi3-" in new
    vdir = copy_variant(img2gray_cpu_build, tmp_path / "build", new)
    assert _kernelkit_loads(tmp_path).startswith(f"CONFORMANCE-OK {vdir}")
    assert _upstream_loads(kernels_019, tmp_path).startswith(f"CONFORMANCE-OK {vdir}")
    old = _upstream_loads(kernels_017, tmp_path)
    assert old.startswith("FAILED") and "does not match system backend" in old, old
    report = check_build(vdir)
    assert [f for f in report.findings if f.severity == "error"] == []


def test_zip_build_layout(kernels_017: UpstreamEnv, kernels_019: UpstreamEnv,
                          img2gray_cpu_build: Path, tmp_path: Path) -> None:
    """Row "build-layout zip": the package in ``<id>.zip``, the extension beside it: kernelkit
    and 0.19.1 load it (and 0.19.1 verifies its digest); 0.17.2 predates the layout and finds no
    ``__init__.py``. kernelkit check passes it."""
    from kernelkit.check import check_build

    vdir = to_zip_layout(copy_variant(img2gray_cpu_build, tmp_path / "build"))
    meta = json.loads((vdir / "metadata.json").read_text())
    assert meta["build-layout"] == "zip" and not (vdir / "__init__.py").exists()
    assert sorted(p.name for p in vdir.iterdir()) == sorted(
        [f"{meta['id']}.zip", f"{meta['id']}.abi3.so", "metadata.json", "symbols.json"])
    zipped = f"{vdir}/{meta['id']}.zip/__init__.py"
    assert _kernelkit_loads(tmp_path).startswith(f"CONFORMANCE-OK {zipped}")
    assert _upstream_loads(kernels_019, tmp_path).startswith(f"CONFORMANCE-OK {zipped}")
    old = _upstream_loads(kernels_017, tmp_path)
    assert old.startswith("FAILED") and "No kernel module found" in old, old
    report = check_build(vdir)
    assert [f for f in report.findings if f.severity == "error"] == []


AGNOSTIC = """
from pathlib import Path
import torch, {tool}
k = {tool}.get_local_kernel(Path({path!r}))
print("CONFORMANCE-OK", k.scale(torch.ones(1)).item())
"""


def test_agnostic_backend(kernels_017: UpstreamEnv, kernels_019: UpstreamEnv,
                          tmp_path: Path) -> None:
    """Row "backend type agnostic": a ``torch-universal`` variant whose metadata says backend
    ``agnostic`` loads in kernelkit and 0.19.1; 0.17.2 cannot parse the metadata."""
    make_variant(tmp_path / "build", "torch-universal", name="agn", uid="a9a9a9a",
                 backend="agnostic", factor=3.0)
    ours = kernelkit_run(AGNOSTIC.format(tool="kernelkit", path=str(tmp_path)))
    assert ours.stdout.strip() == "CONFORMANCE-OK 3.0", ours.stderr
    theirs = kernels_019.run(AGNOSTIC.format(tool="kernels", path=str(tmp_path)))
    assert theirs.stdout.strip() == "CONFORMANCE-OK 3.0", theirs.stderr
    old = kernels_017.run(AGNOSTIC.format(tool="kernels", path=str(tmp_path)))
    assert old.returncode != 0 and "unknown variant `agnostic`" in old.stderr, old.stderr


def test_describe_api_both_ways(kernels_019: UpstreamEnv, img2gray_cpu_build: Path,
                                tmp_path: Path) -> None:
    """Row "symbols.json / describe-api": 0.19.1's ``kernels describe-api`` reads the
    symbols.json kernelkit's build sealed, and ``kernelkit describe-api`` reads the same file
    in a zip-layout copy; both list the same functions and layers (0.17.2 has no describe-api)."""
    project = img2gray_cpu_build.parent.parent
    theirs = kernels_019.cli("describe-api", str(project), "--json")
    assert theirs.returncode == 0, theirs.stderr
    up = json.loads(theirs.stdout)
    assert up["functions"] == [{"name": "img2gray"}] and up["variant"] == img2gray_cpu_build.name
    to_zip_layout(copy_variant(img2gray_cpu_build, tmp_path / "build"))
    ours = kernelkit_cli("describe-api", str(tmp_path), "--json")
    assert ours.returncode == 0, ours.stderr
    mine = json.loads(ours.stdout)
    assert (mine["functions"], mine["layers"]) == (up["functions"], up["layers"])
