"""Issue 27 item 3: offline misses and trust that explain themselves, on real local hubs, a
real cache and real imports.

* A second machine: the cache was filled from one hub, the configured hub is another; the
  offline miss names the cached copy, with the setting and the call (trust included) that load
  it, and following that advice loads it, still offline.
* Trust on locked loads, decided (docs/security.md "Locked loads"): the lock is the consent;
  `kernelkit lock` says so for every untrusted publisher it pins; `load_kernel` and
  `get_locked_kernel` then load without `trust_remote_code`, `get_kernel` still refuses.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest

from kernelkit.errors import OfflineError, TrustError
from kernelkit.hub.local import LocalGitHub
from kernelkit.loader import api
from tests.helpers import make_variant, publish_build, run_cli


def publish(hub: LocalGitHub, tmp: Path, repo: str, factor: float = 2.0) -> str:
    uid = uuid.uuid4().hex[:7]
    build = tmp / f"src-{uid}" / "build"
    make_variant(build, "torch-cpu", name=repo.split("/")[1], uid=uid, factor=factor)
    commit = publish_build(hub, repo, "v1", build)
    hub.tag(repo, "v1.0.0", commit)
    return commit


def test_an_offline_miss_names_other_hubs_copies_and_how_to_load_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    repo = f"acme/off{uuid.uuid4().hex[:6]}"
    first = LocalGitHub(tmp_path / "hub-a")
    publish(first, tmp_path, repo)
    monkeypatch.setenv("KERNELKIT_HUB", str(first.root))
    api.get_kernel(repo, version=1, trust_remote_code=True)  # online once, from hub A
    # the second machine: the same cache, another hub configured, offline
    monkeypatch.setenv("KERNELKIT_HUB", str(tmp_path / "hub-b"))
    monkeypatch.setenv("KERNELKIT_OFFLINE", "1")
    with pytest.raises(OfflineError) as info:
        api.get_kernel(repo, version=1, trust_remote_code=True)
    text = str(info.value)
    assert "cached refs of this hub: none" in text
    assert f"the cache holds {repo} from other hubs" in text
    assert f"local:{first.root.resolve()} (cached: v1, v1.0.0)" in text
    setting = f"KERNELKIT_HUB={first.root.resolve()}"
    call = f'kernelkit.get_kernel("{repo}", version=1, trust_remote_code=True)'
    assert f"with {setting}, {call}" in text
    # following the advice loads it, still offline
    monkeypatch.setenv("KERNELKIT_HUB", setting.split("=", 1)[1])
    mod = api.get_kernel(repo, version=1, trust_remote_code=True)
    assert mod.scale(torch.ones(1)).item() == 2.0


def test_hub_settings_name_every_kind_of_hub() -> None:
    from kernelkit.hub.hubid import settings_for

    assert settings_for("local:/srv/hub") == {"KERNELKIT_HUB": "/srv/hub"}
    assert settings_for("git:ssh://h/kernels") == {"KERNELKIT_HUB": "git+ssh://h/kernels"}
    assert settings_for("hf:https://huggingface.co") == {"KERNELKIT_HUB": "hf"}
    assert settings_for("hf:http://127.0.0.1:8080") == {
        "KERNELKIT_HUB": "hf", "HF_ENDPOINT": "http://127.0.0.1:8080"}


def test_a_locked_load_needs_no_trust_and_the_lock_says_so(tmp_path: Path) -> None:
    import torch

    from kernelkit.lock.api import get_locked_kernel, load_kernel

    repo = f"acme/lt{uuid.uuid4().hex[:6]}"
    hub = LocalGitHub(tmp_path / "hub")
    publish(hub, tmp_path, repo, factor=3.0)
    app = tmp_path / "app"
    app.mkdir()
    (app / "pyproject.toml").write_text(
        f'[project]\nname = "app"\n\n[tool.kernels.dependencies]\n"{repo}" = 1\n')
    out = run_cli("lock", str(app), "--hub", str(hub.root))
    assert out.returncode == 0, out.stderr
    note = re.search(r"note: (.*): not from a trusted publisher; .* this lock is your consent",
                     out.stderr)
    assert note is not None and note.group(1) == repo
    data = json.loads(run_cli("lock", str(app), "--hub", str(hub.root), "--json").stdout)
    assert data["untrusted"] == [repo]
    # get_kernel asks, as before
    with pytest.raises(TrustError):
        api.get_kernel(repo, version=1, hub=hub, cache_dir=tmp_path / "c1")
    # the locked loads do not: the lock pinned these bytes
    mod = get_locked_kernel(repo, lockfile=app / "kernels.lock", hub=hub,
                            cache_dir=tmp_path / "c2")
    assert mod.scale(torch.ones(1)).item() == 3.0
    assert run_cli("download", str(app), "--hub", str(hub.root), "--dest",
                   str(tmp_path / "dl")).returncode == 0
    mod = load_kernel(repo, lockfile=app / "kernels.lock", cache_dir=tmp_path / "dl")
    assert mod.scale(torch.ones(1)).item() == 3.0
    # a trusted publisher's lock has nothing to say
    trusted = LocalGitHub(tmp_path / "hub-t")
    publish(trusted, tmp_path, "kernels-community/x")
    (app / "pyproject.toml").write_text(
        '[project]\nname = "app"\n\n[tool.kernels.dependencies]\n"kernels-community/x" = 1\n')
    out = run_cli("lock", str(app), "--hub", str(trusted.root))
    assert out.returncode == 0 and "trusted publisher" not in out.stderr
