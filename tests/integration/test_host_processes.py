"""Host detection in fresh interpreters.

Moved from tests/unit/test_host.py: these start processes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
@pytest.mark.cuda_build
def test_detect_cuda_torch_without_gpu(cuda_torch_python: Path) -> None:
    """A CUDA build of torch selects the CUDA backend even with no GPU present (upstream rule)."""
    cu_python = str(cuda_torch_python)
    try:
        out = subprocess.run(
            [
                cu_python,
                "-c",
                ("import sys; sys.path.insert(0, sys.argv[1]);"
                "from kernelkit.variants.host import detect_system; s = detect_system();"
                "print(s.backend, s.compute_tag, s.torch_version)"),
                _src(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    except FileNotFoundError:
        pytest.skip("no CUDA torch environment at /tmp/kk/cu")
    assert out.returncode == 0, out.stderr
    backend, tag, _ = out.stdout.split(maxsplit=2)
    assert backend == "cuda" and tag.startswith("cu")


def test_detect_without_torch_is_cpu_or_cuda_runtime() -> None:
    """Without torch, detection must not import it (it falls back to probing libcudart)."""
    code = (
        "import sys; from kernelkit.variants import host; s = host.detect_system();"
        "print(s.torch_version, s.backend, 'torch' in sys.modules)"
    )
    # -S: no site-packages, so torch is not importable; only kernelkit's source is on the path
    out = subprocess.run(
        [sys.executable, "-S", "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": _src()},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "None"
    assert out.stdout.split()[1] in ("cpu", "cuda")
    assert out.stdout.split()[2] == "False"


def _src() -> str:
    import kernelkit

    return str(__import__("pathlib").Path(kernelkit.__file__).parents[1])
