"""Layers API rules that need no torch: Mode combinations, Device/capability ranges, mapping
registration and scoping, repository selection per device / capability / mode."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernelkit.errors import KernelMappingError
from kernelkit.layers import (
    CUDAProperties,
    Device,
    LayerRepository,
    LocalLayerRepository,
    LockedLayerRepository,
    Mode,
    ROCMProperties,
    register_kernel_mapping,
    use_kernel_mapping,
)
from kernelkit.layers.kernelize import kernel_mapping_disabled
from kernelkit.layers.mapping import Miss, choose_repository, current_mapping, select_repository
from kernelkit.layers.mode import validate_kernelize_mode


class Repo:
    """A repository value for mapping tests (``load`` is never called here)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def load(self) -> type:
        raise AssertionError("mapping rules must not load kernels")

    def __repr__(self) -> str:
        return f"Repo({self.name})"


@pytest.fixture(autouse=True)
def empty_mapping() -> Iterator[None]:
    with use_kernel_mapping({}, inherit_mapping=False):
        yield


def choose(layer: str, device: str, mode: Mode, capability: int | None = None):
    return choose_repository(current_mapping(), layer, device, capability, mode)


# --- Mode -----------------------------------------------------------------------------------


def test_mode_inference_and_training_are_exclusive() -> None:
    with pytest.raises(ValueError, match="mutually exclusive"):
        Mode.INFERENCE | Mode.TRAINING
    with pytest.raises(ValueError, match="mutually exclusive"):
        (Mode.TRAINING | Mode.TORCH_COMPILE) | Mode.INFERENCE


def test_mode_fallback_cannot_be_combined() -> None:
    for other in (Mode.INFERENCE, Mode.TRAINING, Mode.TORCH_COMPILE):
        with pytest.raises(ValueError, match="FALLBACK cannot be combined"):
            Mode.FALLBACK | other
    assert Mode.FALLBACK | Mode.FALLBACK == Mode.FALLBACK


def test_mode_torch_compile_combines() -> None:
    mode = Mode.INFERENCE | Mode.TORCH_COMPILE
    assert Mode.INFERENCE in mode and Mode.TORCH_COMPILE in mode and Mode.TRAINING not in mode
    assert mode.describe() == "INFERENCE|TORCH_COMPILE"


@pytest.mark.parametrize(("mode", "message"), [
    (Mode.FALLBACK, "only be used to register"),
    (Mode.TORCH_COMPILE, "must contain Mode.INFERENCE or Mode.TRAINING"),
])
def test_kernelize_mode_validation(mode: Mode, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        validate_kernelize_mode(mode)


def test_kernelize_modes_accepted() -> None:
    for mode in (Mode.INFERENCE, Mode.TRAINING, Mode.INFERENCE | Mode.TORCH_COMPILE,
                 Mode.TRAINING | Mode.TORCH_COMPILE):
        validate_kernelize_mode(mode)


# --- Device ---------------------------------------------------------------------------------


def test_capability_range_validation() -> None:
    with pytest.raises(ValueError, match="min_capability"):
        CUDAProperties(min_capability=90, max_capability=80)
    with pytest.raises(TypeError, match="int"):
        CUDAProperties(min_capability="8.0", max_capability=90)  # type: ignore[arg-type]
    assert CUDAProperties(80, 90) == CUDAProperties(min_capability=80, max_capability=90)
    assert hash(CUDAProperties(80, 90)) == hash(CUDAProperties(80, 90))
    assert CUDAProperties(80, 90).contains(86) and not CUDAProperties(80, 90).contains(75)


def test_device_properties_must_match_type() -> None:
    with pytest.raises(ValueError, match="only supported for 'cuda'"):
        Device("cpu", CUDAProperties(80, 90))
    with pytest.raises(ValueError, match="only supported for 'rocm'"):
        Device("cuda", ROCMProperties(80, 90))
    assert Device("cuda", CUDAProperties(80, 90)) == Device("cuda", CUDAProperties(80, 90))
    assert Device("cuda") != Device("cuda", CUDAProperties(80, 90))
    assert len({Device("cpu"), Device("cpu"), Device("cuda")}) == 2


# --- registration ---------------------------------------------------------------------------


def test_bare_repository_is_registered_for_fallback() -> None:
    repo = Repo("a")
    register_kernel_mapping({"SiluAndMul": {"cuda": repo}})
    for mode in (Mode.INFERENCE, Mode.TRAINING | Mode.TORCH_COMPILE):
        choice = choose("SiluAndMul", "cuda", mode)
        assert choice.repo is repo and choice.registered_mode == Mode.FALLBACK


def test_mode_priority() -> None:
    inf, trn, trn_c, fb = Repo("inf"), Repo("trn"), Repo("trn_c"), Repo("fb")
    register_kernel_mapping({"L": {"cpu": {Mode.INFERENCE: inf, Mode.TRAINING: trn,
                                           Mode.TRAINING | Mode.TORCH_COMPILE: trn_c,
                                           Mode.FALLBACK: fb}}})
    assert choose("L", "cpu", Mode.INFERENCE).repo is inf
    assert choose("L", "cpu", Mode.TRAINING).repo is trn
    # compile modes never pick a repository registered without TORCH_COMPILE
    assert choose("L", "cpu", Mode.INFERENCE | Mode.TORCH_COMPILE).repo is trn_c
    assert choose("L", "cpu", Mode.TRAINING | Mode.TORCH_COMPILE).repo is trn_c


def test_training_never_uses_an_inference_only_repository() -> None:
    inf, fb = Repo("inf"), Repo("fb")
    register_kernel_mapping({"L": {"cpu": {Mode.INFERENCE: inf}}})
    choice = choose("L", "cpu", Mode.TRAINING)
    assert choice.repo is None and choice.miss is Miss.NO_MODE
    assert "mode=TRAINING" in choice.reason and "INFERENCE" in choice.reason
    register_kernel_mapping({"L": {"cpu": {Mode.INFERENCE: inf, Mode.FALLBACK: fb}}})
    assert choose("L", "cpu", Mode.TRAINING).repo is fb
    # inference prefers a training kernel over the fallback
    assert select_repository({Mode.TRAINING: inf, Mode.FALLBACK: fb}, Mode.INFERENCE) == (
        inf, Mode.TRAINING)


def test_reregistering_a_device_replaces_its_mode_table() -> None:
    first, second = Repo("1"), Repo("2")
    register_kernel_mapping({"L": {"cpu": {Mode.INFERENCE: first}, "cuda": first}})
    register_kernel_mapping({"L": {"cpu": {Mode.TRAINING: second}}})
    assert choose("L", "cpu", Mode.INFERENCE).repo is second  # via TRAINING, INFERENCE gone
    assert choose("L", "cuda", Mode.INFERENCE).repo is first  # other devices kept


def test_capability_ranges_pick_the_narrowest() -> None:
    wide, narrow, anygpu = Repo("wide"), Repo("narrow"), Repo("any")
    register_kernel_mapping({"L": {
        Device("cuda", CUDAProperties(75, 89)): wide,
        Device("cuda", CUDAProperties(80, 89)): narrow,
    }})
    assert choose("L", "cuda", Mode.INFERENCE, capability=86).repo is narrow
    assert choose("L", "cuda", Mode.INFERENCE, capability=75).repo is wide
    miss = choose("L", "cuda", Mode.INFERENCE, capability=90)
    assert miss.repo is None and miss.miss is Miss.NO_PROPERTIES
    assert "capability 90" in miss.reason and "75..89" in miss.reason
    # without a visible GPU only an entry without properties fits
    assert choose("L", "cuda", Mode.INFERENCE, capability=None).miss is Miss.NO_PROPERTIES
    register_kernel_mapping({"L": {"cuda": anygpu}})
    assert choose("L", "cuda", Mode.INFERENCE, capability=90).repo is anygpu
    assert choose("L", "cuda", Mode.INFERENCE, capability=None).repo is anygpu
    assert choose("L", "cuda", Mode.INFERENCE, capability=86).repo is narrow


def test_same_range_registered_again_replaces() -> None:
    old, new = Repo("old"), Repo("new")
    dev = Device("rocm", ROCMProperties(90, 95))
    register_kernel_mapping({"L": {dev: old}})
    register_kernel_mapping({"L": {dev: new}})
    assert choose("L", "rocm", Mode.INFERENCE, capability=94).repo is new


def test_misses_say_why() -> None:
    register_kernel_mapping({"L": {"cuda": Repo("a")}})
    no_layer = choose("Other", "cuda", Mode.INFERENCE)
    assert no_layer.miss is Miss.NO_LAYER and "`Other`" in no_layer.reason
    no_device = choose("L", "cpu", Mode.INFERENCE)
    assert no_device.miss is Miss.NO_DEVICE
    assert "device type `cpu`" in no_device.reason and "cuda" in no_device.reason


def test_scoped_mapping_is_restored() -> None:
    outer, inner = Repo("outer"), Repo("inner")
    register_kernel_mapping({"L": {"cpu": outer}})
    with use_kernel_mapping({"L": {"cpu": inner}, "M": {"cpu": inner}}):
        assert choose("L", "cpu", Mode.INFERENCE).repo is inner
        assert choose("M", "cpu", Mode.INFERENCE).repo is inner
        with use_kernel_mapping({"N": {"cpu": inner}}, inherit_mapping=False):
            assert choose("L", "cpu", Mode.INFERENCE).miss is Miss.NO_LAYER
            assert choose("N", "cpu", Mode.INFERENCE).repo is inner
        assert choose("L", "cpu", Mode.INFERENCE).repo is inner
    assert choose("L", "cpu", Mode.INFERENCE).repo is outer
    assert choose("M", "cpu", Mode.INFERENCE).miss is Miss.NO_LAYER


def test_scoped_mapping_is_restored_after_an_error() -> None:
    with pytest.raises(RuntimeError), use_kernel_mapping({"L": {"cpu": Repo("x")}}):
        raise RuntimeError("boom")
    assert choose("L", "cpu", Mode.INFERENCE).miss is Miss.NO_LAYER


def test_register_without_inheriting_clears() -> None:
    register_kernel_mapping({"A": {"cpu": Repo("a")}})
    register_kernel_mapping({"B": {"cpu": Repo("b")}}, inherit_mapping=False)
    assert set(current_mapping()) == {"B"}


@pytest.mark.parametrize(("mapping", "message"), [
    ({"L": {"gpu": Repo("a")}}, "Unknown device type 'gpu'"),
    ({"L": {"cpu": {Mode.TORCH_COMPILE: Repo("a")}}}, "cannot be registered"),
    ({"L": {"cpu": {"inference": Repo("a")}}}, "cannot be registered"),
    ({"L": {"cpu": "org/repo"}}, "is not a repository"),
    ({"L": Repo("a")}, "expected a layer name"),
])
def test_malformed_mappings_are_rejected_whole(mapping: dict, message: str) -> None:
    register_kernel_mapping({"Keep": {"cpu": Repo("k")}})
    with pytest.raises(KernelMappingError, match=message):
        register_kernel_mapping(mapping)
    assert set(current_mapping()) == {"Keep"}  # nothing half-registered


def test_disable_kernel_mapping_values() -> None:
    assert kernel_mapping_disabled({}) is False
    assert kernel_mapping_disabled({"DISABLE_KERNEL_MAPPING": "1"}) is True
    assert kernel_mapping_disabled({"DISABLE_KERNEL_MAPPING": "0"}) is False
    assert kernel_mapping_disabled({"DISABLE_KERNEL_MAPPING": "True"}) is True
    with pytest.raises(KernelMappingError, match="DISABLE_KERNEL_MAPPING"):
        kernel_mapping_disabled({"DISABLE_KERNEL_MAPPING": "maybe"})


# --- repositories ---------------------------------------------------------------------------


def test_layer_repository_needs_exactly_one_of_revision_and_version() -> None:
    with pytest.raises(ValueError, match="not both"):
        LayerRepository("org/act", layer_name="L", revision="main", version=1)
    with pytest.raises(ValueError, match="must be specified"):
        LayerRepository("org/act", layer_name="L")


def test_repositories_are_values() -> None:
    a = LayerRepository("org/act", layer_name="L", version=1)
    assert a == LayerRepository("org/act", layer_name="L", version=1)
    assert hash(a) == hash(LayerRepository("org/act", layer_name="L", version=1))
    assert a != LayerRepository("org/act", layer_name="L", version=2)
    assert a != LayerRepository("org/act", layer_name="L", version=1, trust_remote_code=True)
    assert str(a) == "`org/act` (version: 1), layer `L`"
    local = LocalLayerRepository(Path("/k/act"), layer_name="L")
    assert local == LocalLayerRepository("/k/act", layer_name="L") and local != a
    assert str(local) == "`/k/act` (layer `L`)"


def _write_lock(path: Path, repo_id: str, sha: str) -> Path:
    path.write_text(json.dumps([{"dependency": {"repo-id": repo_id, "version": 1},
                                 "lock": {"commit": sha}}]))
    return path


def test_locked_layer_repository_reads_the_lock_eagerly(tmp_path: Path) -> None:
    sha = "a" * 40
    lock = _write_lock(tmp_path / "kernels.lock", "org/act", sha)
    repo = LockedLayerRepository("org/act", lockfile=lock, layer_name="SiluAndMul")
    assert repo.revision == sha
    assert str(repo) == f"`org/act` (revision: {sha}), layer `SiluAndMul`"
    assert repo == LockedLayerRepository("org/act", lockfile=tmp_path, layer_name="SiluAndMul")
    with pytest.raises(ValueError, match="Kernel `org/other` is not locked"):
        LockedLayerRepository("org/other", lockfile=lock, layer_name="SiluAndMul")
