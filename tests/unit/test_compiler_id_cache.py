"""The compiler identification cache: CMake's per-toolchain facts kept and put into fresh trees."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelkit.builder.caches import compiler_id_cache as ids, configure_cache


def _configure(*extra: str) -> list[str]:
    return ["cmake", "-S", "/p/src", "-B", "/p/build", "-G", "Ninja",
            "-DCMAKE_BUILD_TYPE=Release", "-DKK_SOURCE_ROOT=/p", *extra]


def test_key_follows_the_toolchain_not_the_project(tmp_path: Path) -> None:
    cxx = tmp_path / "c++"
    cxx.write_text("1")
    env = {"PATH": str(tmp_path)}
    base = ids.identification_key(_configure(), env, [cxx, None])
    assert ids.identification_key(_configure(), env, [cxx, None]) == base
    # project, build directory and Python do not enter CMake's identification
    other_project = ["cmake", "-S", "/q/src", "-B", "/q/build", "-G", "Ninja",
                     "-DCMAKE_BUILD_TYPE=Release", "-DKK_SOURCE_ROOT=/q",
                     "-DPython3_EXECUTABLE=/venv/bin/python"]
    assert ids.identification_key(other_project, env, [cxx, None]) == base
    # what identification reads does
    assert ids.identification_key(_configure("-DCMAKE_CUDA_COMPILER=/cuda/bin/nvcc"), env,
                                  [cxx, None]) != base
    assert ids.identification_key(_configure(), {**env, "CXXFLAGS": "-m32"}, [cxx, None]) != base
    assert ids.identification_key(_configure(), {**env, "CUDAHOSTCXX": "g++-12"},
                                  [cxx, None]) != base
    cxx.write_text("12")  # a reinstalled compiler
    assert ids.identification_key(_configure(), env, [cxx, None]) != base
    ar = tmp_path / "ar"  # binutils found on PATH
    ar.write_text("x")
    ar.chmod(0o755)
    assert ids.identification_key(_configure(), env, [cxx, None]) != \
        ids.identification_key(_configure(), {"PATH": "/nonexistent"}, [cxx, None])


def _configured(build: Path, *langs: str) -> None:
    version = build / "CMakeFiles" / "4.4.5"
    (version / "CompilerIdCXX").mkdir(parents=True)
    (version / "CMakeSystem.cmake").write_text("set(CMAKE_SYSTEM Linux)\n")
    for lang in langs:
        (version / f"CMake{lang}Compiler.cmake").write_text(f"set(CMAKE_{lang}_COMPILER x)\n")
    (version / "CMakeDetermineCompilerABI_CXX.bin").write_bytes(b"\x7fELF")
    (build / "CMakeCache.txt").write_text("x\n")


def test_keep_seed_and_languages_added_later(tmp_path: Path) -> None:
    cache = tmp_path / "cfg"
    first, fresh = tmp_path / "a", tmp_path / "b"
    assert not ids.seed(cache, "k", fresh)  # nothing kept yet
    _configured(first, "C", "CXX")
    ids.keep(cache, "k", first)
    kept = cache / ids.ID_DIR / "k" / "4.4.5"
    assert sorted(p.name for p in kept.iterdir()) == \
        ["CMakeCCompiler.cmake", "CMakeCXXCompiler.cmake", "CMakeSystem.cmake"]
    assert ids.seed(cache, "k", fresh)
    assert (fresh / "CMakeFiles" / "4.4.5" / "CMakeCXXCompiler.cmake").read_text() == \
        "set(CMAKE_CXX_COMPILER x)\n"
    assert not ids.seed(cache, "k", first)  # a configured tree is never touched
    # a CUDA project identified CUDA (the kept C/C++ came from the entry): CUDA joins it
    _configured(tmp_path / "c", "C", "CXX", "CUDA")
    ids.keep(cache, "k", tmp_path / "c")
    assert (kept / "CMakeCUDACompiler.cmake").is_file()
    ids.drop(cache, "k", fresh)
    assert not (cache / ids.ID_DIR / "k").exists() and not fresh.exists()


def test_configure_cache_prune_leaves_the_identification_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(configure_cache, "KEEP", 0)
    (tmp_path / ids.ID_DIR / "k").mkdir(parents=True)
    (tmp_path / "0123abcd").mkdir()
    configure_cache._prune(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [ids.ID_DIR]
