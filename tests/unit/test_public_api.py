"""`import kernelkit` exposes the upstream-recognisable API lazily."""

from __future__ import annotations

import importlib

import pytest

import kernelkit

UPSTREAM_NAMES = [
    "get_kernel", "get_local_kernel", "has_kernel", "install_kernel", "get_loaded_kernels",
    "get_kernel_variants", "load_kernel", "get_locked_kernel", "kernelize", "Mode", "Device",
    "CUDAProperties", "ROCMProperties", "LayerRepository", "LocalLayerRepository",
    "LockedLayerRepository", "use_kernel_forward_from_hub", "replace_kernel_forward_from_hub",
    "use_kernel_mapping", "register_kernel_mapping", "use_kernelized_func", "LoadedKernel",
    "RepoInfo", "Metadata",
]


@pytest.mark.parametrize("name", UPSTREAM_NAMES)
def test_name_resolves(name: str) -> None:
    assert name in kernelkit.__all__
    assert getattr(kernelkit, name) is not None


def test_every_layers_name_is_exported() -> None:
    layers = importlib.import_module("kernelkit.layers")
    assert sorted(set(layers.__all__) - set(kernelkit.__all__)) == []


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'get_kernal'"):
        kernelkit.get_kernal  # noqa: B018
