"""kernelkit.settings: one declaration and one parser per variable (issue 28 item 6); the
readers that moved onto it keep their answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelkit import settings as s
from kernelkit.errors import KernelMappingError, UsageError


@pytest.mark.parametrize(("text", "default", "expected"), [
    ("1", False, True), ("TRUE", False, True), (" yes ", False, True), ("On", False, True),
    ("0", True, False), ("false", True, False), ("NO", True, False), ("off", True, False),
    (None, True, True), ("", False, False), ("   ", True, True), ("maybe", False, None),
])
def test_one_flag_parser(text: str | None, default: bool, expected: bool | None) -> None:
    assert s.parse_flag(text, default) is expected


def test_every_on_off_variable_reads_the_same_words() -> None:
    """The five flags that parsed their own ways read one vocabulary now."""
    flags = [v for v in s.SETTINGS if isinstance(v, s.Flag)]
    assert {f.name for f in flags} >= {"KERNELKIT_CCACHE", "KERNELKIT_OFFLINE", "HF_HUB_OFFLINE",
                                        "KERNELKIT_PROGRESS", "DISABLE_KERNEL_MAPPING",
                                        "KERNELKIT_BUILD_MISSING"}
    for flag in flags:
        assert flag.read({flag.name: "Yes"}) is True and flag.read({flag.name: "OFF"}) is False
        assert flag.read({}) is flag.flag_default


def test_a_lenient_flag_reads_another_word_as_its_default_a_strict_one_refuses_it() -> None:
    assert s.KERNELKIT_OFFLINE.read({"KERNELKIT_OFFLINE": "maybe"}) is False
    assert s.KERNELKIT_CCACHE.read({"KERNELKIT_CCACHE": "maybe"}) is True
    with pytest.raises(UsageError, match="DISABLE_KERNEL_MAPPING='maybe' is not a boolean"):
        s.DISABLE_KERNEL_MAPPING.read({"DISABLE_KERNEL_MAPPING": "Maybe"})


def test_kernelize_keeps_its_error_class_for_a_bad_mapping_flag() -> None:
    from kernelkit.layers.kernelize import kernel_mapping_disabled

    with pytest.raises(KernelMappingError, match="is not a boolean") as info:
        kernel_mapping_disabled({"DISABLE_KERNEL_MAPPING": "2"})
    assert "set it to 1" in (info.value.hint or "")
    assert kernel_mapping_disabled({"DISABLE_KERNEL_MAPPING": "true"}) is True


def test_path_or_off(tmp_path: Path) -> None:
    v = s.KERNELKIT_CONFIGURE_CACHE
    assert v.off({v.name: "0"}) and v.read({v.name: "0"}) is None
    assert not v.off({}) and v.read({}) is None and v.read({v.name: " "}) is None
    assert v.read({v.name: str(tmp_path)}) == tmp_path


def test_count_refuses_what_is_not_a_whole_number() -> None:
    v = s.KERNELKIT_PROGRESS_MIN_BYTES
    assert v.read({}) == 16 * 2**20 and v.read({v.name: " 0 "}) == 0
    for bad in ("-1", "1.5", "lots"):
        with pytest.raises(UsageError, match="is not a number of bytes"):
            v.read({v.name: bad})


def test_names_and_remote_storage() -> None:
    assert s.KERNELKIT_TRUSTED_PUBLISHERS.read(
        {"KERNELKIT_TRUSTED_PUBLISHERS": " acme, ,beta "}) == ("acme", "beta")
    v = s.KERNELKIT_CCACHE_REMOTE
    assert v.read({v.name: "  file:/a   redis://h "}) == "file:/a redis://h"
    with pytest.raises(UsageError, match="'ftp://h' is not a ccache remote storage"):
        v.read({v.name: "file:/a ftp://h"})


def test_the_readers_keep_their_answers(tmp_path: Path) -> None:
    from kernelkit.loader.settings import read_settings
    from kernelkit.util.paths import default_cache_dir, default_compiler_cache_dir

    env = {"XDG_CACHE_HOME": str(tmp_path), "HF_HUB_OFFLINE": "ON",
           "KERNELKIT_TRUSTED_PUBLISHERS": "acme", "LOCAL_KERNELS": "", "KERNELKIT_HUB": ""}
    got = read_settings(env)
    assert got.offline and got.trusted_publishers == ("kernels-community", "acme")
    assert got.local_kernels is None and got.hub_spec is None
    assert default_cache_dir(env) == tmp_path / "kernelkit" / "kernels"
    assert default_compiler_cache_dir({**env, "CCACHE_DIR": "/c"}) == Path("/c")
    assert default_compiler_cache_dir({**env, "KERNELKIT_CCACHE": "Off"}) is None


def test_declarations_are_unique_and_documented() -> None:
    names = [v.name for v in s.SETTINGS]
    assert len(names) == len(set(names))
    assert all(v.doc and v.default and v.read_by for v in s.SETTINGS)


def test_the_signature_settings_are_read_through_their_declarations(tmp_path: Path) -> None:
    """Issue 25's variables: ``KERNELKIT_REQUIRE_SIGNED`` reads the one flag vocabulary, the
    trust policy defaults to ``$XDG_CONFIG_HOME/kernelkit/trust.toml`` only when it exists."""
    from kernelkit.loader.settings import read_settings
    from kernelkit.signing.keys import default_key_path

    env = {"XDG_CONFIG_HOME": str(tmp_path), "KERNELKIT_REQUIRE_SIGNED": " Yes "}
    got = read_settings(env)
    assert got.require_signed and got.trust_policy_path is None
    assert got.sigstore_trusted_root is None
    (tmp_path / "kernelkit").mkdir()
    (tmp_path / "kernelkit" / "trust.toml").write_text("")
    assert read_settings(env).trust_policy_path == tmp_path / "kernelkit" / "trust.toml"
    named = {**env, "KERNELKIT_TRUST_POLICY": "/p.toml", "KERNELKIT_REQUIRE_SIGNED": "off",
             "KERNELKIT_SIGSTORE_TRUSTED_ROOT": "/root.json"}
    got = read_settings(named)
    assert got.trust_policy_path == Path("/p.toml") and not got.require_signed
    assert got.sigstore_trusted_root == Path("/root.json")
    assert default_key_path(env) == tmp_path / "kernelkit" / "signing-key.pem"
    assert s.KERNELKIT_SIGNING_KEY.read({"KERNELKIT_SIGNING_KEY": ""}) is None


def test_a_misspelt_require_signed_is_an_error_not_silently_off() -> None:
    from kernelkit.loader.settings import read_settings

    with pytest.raises(UsageError, match="KERNELKIT_REQUIRE_SIGNED='ture' is not a boolean") \
            as info:
        read_settings({"KERNELKIT_REQUIRE_SIGNED": "Ture"})
    assert "to require signatures" in (info.value.hint or "")
def test_build_missing_is_read_through_its_declaration(monkeypatch: pytest.MonkeyPatch) -> None:
    """``kernelkit.get_kernel``'s default (issue 29) is the declared flag, in its words; the
    argument wins over the variable either way."""
    from kernelkit.source_build.api import source_build_provider

    assert s.KERNELKIT_BUILD_MISSING.read({}) is False
    monkeypatch.setenv("KERNELKIT_BUILD_MISSING", "Yes")
    assert source_build_provider(None) is not None
    assert source_build_provider(False) is None
    monkeypatch.setenv("KERNELKIT_BUILD_MISSING", "off")
    assert source_build_provider(None) is None
    assert source_build_provider(True) is not None
