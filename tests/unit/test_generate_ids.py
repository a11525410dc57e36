"""Build ids (spec §3.1): from the content of the sources and settings, and the generated files
that carry the op namespace into the one unit that needs it."""

from __future__ import annotations

import re

from kernelkit.generate.ids import (
    content_id,
    ops_name,
    render_ops_id_header,
    render_ops_id_source,
    target_name,
)


def test_the_id_follows_content_and_settings_only() -> None:
    first = content_id("sha256:aa", ["capabilities="])
    assert first == content_id("sha256:aa", ["capabilities="])  # no git, no chance
    assert re.fullmatch(r"[a-z2-7]{13}", first)  # upstream's random-id alphabet and length
    assert content_id("sha256:ab", ["capabilities="]) != first  # other sources
    assert content_id("sha256:aa", ["capabilities=9.0"]) != first  # other settings


def test_ops_name_and_target_name() -> None:
    assert ops_name("my_kernel", "rocm", "abc1234_dirty") == "_my_kernel_rocm_abc1234_dirty"
    assert target_name("my_kernel", "cpu") == "_my_kernel_cpu"  # no id: no reconfigure


def test_only_the_header_changes_with_the_id() -> None:
    a, b = render_ops_id_header("relu", "aaaa"), render_ops_id_header("relu", "bbbb")
    assert "#define TORCH_EXTENSION_NAME _relu_cpu_aaaa" in a
    assert "#define TORCH_EXTENSION_NAME _relu_cuda_aaaa" in a
    assert a != b
    source = render_ops_id_source()
    assert '#include "kernelkit_ops_id.h"' in source
    assert "kernelkit_ops_namespace(void)" in source and "__attribute__((weak))" in source
