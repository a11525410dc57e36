"""Is a pinned wheel available to pip here, without running a pip resolution per variant?

Reads pip's configured sources once (``pip config list``: find-links directories, file:// and
http(s) simple indexes), lists the files each offers for a project (cached per process), and
matches name, exact version and a wheel tag this interpreter supports. Unreachable sources are
skipped, so an offline machine answers in milliseconds. Used for planning and
``kernelkit list-variants``; pip itself stays the authority when environments are installed.
"""

from __future__ import annotations

import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from kernelkit.builder.toolchain.toolchain_lock import file_url_path
from kernelkit.errors import CommandError, LockError
from kernelkit.util.run import run

_HREF_RE = re.compile(r'href="([^"#]+)', re.IGNORECASE)
_KEYS = ("find-links", "index-url", "extra-index-url")


@dataclass(frozen=True)
class Sources:
    find_links: tuple[str, ...]
    indexes: tuple[str, ...]


@cache
def configured_sources(python: str = sys.executable) -> Sources:
    """pip's configured find-links and indexes (environment variables included)."""
    try:
        out = run([python, "-m", "pip", "config", "list"], what="pip config list").stdout
    except (CommandError, OSError):
        out = ""
    values: dict[str, list[str]] = {k: [] for k in _KEYS}
    for line in out.splitlines():
        key, _, raw = line.partition("=")
        name = key.rsplit(".", 1)[-1]
        if name in values:
            values[name] += [v for v in raw.strip().strip("'\"").split() if v]
    indexes = values["index-url"][:1] or ["https://pypi.org/simple"]
    return Sources(tuple(dict.fromkeys(values["find-links"])),
                   tuple(dict.fromkeys(indexes + values["extra-index-url"])))


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@cache
def _listing(url: str) -> tuple[str, ...]:
    """File names offered at ``url`` (a directory, a file:// or http(s) page); () if unreachable."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme in ("", "file"):
        path = Path(urllib.parse.unquote(parsed.path))
        if path.is_dir() and not (path / "index.html").is_file():
            return tuple(sorted(p.name for p in path.iterdir()))
        page = path / "index.html" if path.is_dir() else path
        text = page.read_text(encoding="utf-8", errors="replace") if page.is_file() else ""
    else:
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:
                text = resp.read().decode("utf-8", errors="replace")
        except (urllib.error.URLError, OSError, ValueError):
            return ()
    return tuple(urllib.parse.unquote(h.rsplit("/", 1)[-1]) for h in _HREF_RE.findall(text))


def _supported_tags() -> frozenset[str]:
    from packaging.tags import sys_tags

    return frozenset(str(t) for t in sys_tags())


def _matches(filename: str, project: str, version_re: re.Pattern[str],
             tags: frozenset[str]) -> bool:
    if not filename.endswith(".whl"):
        return False
    parts = filename[:-4].split("-")
    if len(parts) < 5 or _normalize(parts[0]) != project or not version_re.fullmatch(parts[1]):
        return False
    pys, abis, plats = parts[-3].split("."), parts[-2].split("."), parts[-1].split(".")
    return any(f"{p}-{a}-{pl}" in tags for p in pys for a in abis for pl in plats)


def wheel_available(project: str, version: str, *, extra_index: str | None = None,
                    sources: Sources | None = None) -> str | None:
    """Where a wheel ``project==version`` for this interpreter is found (``None``: nowhere).

    ``version`` may end in ``.*`` (``13.0.*``) to accept any patch release."""
    sources = sources or configured_sources()
    name = _normalize(project)
    pattern = re.escape(version[:-2]) + r"(\.[0-9A-Za-z.+]+)?" if version.endswith(".*") \
        else re.escape(version)
    version_re = re.compile(pattern)
    tags = _supported_tags()
    pages = list(sources.find_links)
    pages += [f"{ix.rstrip('/')}/{name}/" for ix in
              (*sources.indexes, *([extra_index] if extra_index else []))]
    for page in pages:
        if any(_matches(f, name, version_re, tags) for f in _listing(page)):
            return page
    return None


# --- reachability (before pip pays its retries) ---------------------------------------------


@cache
def index_reachable(url: str, timeout: float = 5.0) -> bool:
    """Does ``url`` answer at all (any HTTP status)? Checked once per process, so an offline
    machine does not pay pip's retries for every variant."""
    if url.startswith("file:"):
        local = file_url_path(url)
        return local is not None and local.exists()
    try:
        urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout)
    except urllib.error.HTTPError:
        return True
    except (urllib.error.URLError, OSError, ValueError):
        return False
    return True


def needs_index(exc: CommandError, index_url: str | None) -> bool:
    """Should a pip call that failed with ``exc`` be retried with ``index_url`` added?

    Raises :class:`LockError` when the wheel is missing and the index cannot be reached."""
    if index_url is None or not _not_found(exc):
        return False
    if not index_reachable(index_url):
        raise LockError(f"the configured pip sources have no matching wheel and {index_url} "
                        "cannot be reached (offline?)",
                        hint="connect to the internet or add the wheel to a pip find-links dir")
    return True


def _not_found(exc: CommandError) -> bool:
    tail = exc.output_tail  # a version pip cannot find under a constraint: ResolutionImpossible
    return any(s in tail for s in ("No matching distribution", "from versions: none",
                                   "ResolutionImpossible"))
