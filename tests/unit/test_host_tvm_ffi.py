"""tvm-ffi's version in the host detection: from the installed metadata, not an import."""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version

import pytest

from kernelkit.util.versions import major_minor
from kernelkit.variants import host


def test_the_version_comes_from_the_metadata_without_importing_tvm_ffi(
        monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        expected = major_minor(version(host.TVM_FFI_DISTRIBUTION))
    except PackageNotFoundError:
        pytest.skip("apache-tvm-ffi is not installed here")
    monkeypatch.delitem(sys.modules, "tvm_ffi", raising=False)
    assert host._tvm_ffi_version() == expected
    assert "tvm_ffi" not in sys.modules  # importing it costs ~25 ms on every load


def test_without_metadata_the_module_is_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    if host.importlib.util.find_spec("tvm_ffi") is None:
        pytest.skip("apache-tvm-ffi is not installed here")
    monkeypatch.setattr(host, "TVM_FFI_DISTRIBUTION", "no-such-distribution-kernelkit")
    import tvm_ffi

    assert host._tvm_ffi_version() == major_minor(str(tvm_ffi.__version__))
