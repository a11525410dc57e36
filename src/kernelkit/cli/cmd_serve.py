"""``kernelkit serve``: serve a hub directory over the Hugging Face Hub HTTP API."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kernelkit.errors import KernelkitError, UsageError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "serve",
        help="serve a hub directory over the Hugging Face Hub API",
        description="Serve the kernel repositories of a hub directory over the subset of the "
        "Hugging Face Hub HTTP API that huggingface_hub, upstream kernels and kernelkit use. "
        "Point clients at it with HF_ENDPOINT=http://HOST:PORT.",
    )
    p.add_argument("--hub", type=Path, metavar="HUB", help="hub directory (default: "
                   "$KERNELKIT_HUB_DIR, ~/.cache/kernelkit/hub)")
    p.add_argument("--host", default="127.0.0.1", metavar="HOST", help="address to listen on "
                   "(default: 127.0.0.1; 0.0.0.0 for every interface)")
    p.add_argument("--port", type=int, default=8000, metavar="PORT",
                   help="port (default: 8000)")
    p.add_argument("--token-file", type=Path, action="append", default=[], metavar="FILE",
                   help="file of write tokens, one per line (may repeat); without one the hub "
                   "is read-only")
    p.add_argument("--read-token-file", type=Path, action="append", default=[], metavar="FILE",
                   help="file of read-only tokens, one per line (may repeat)")
    p.add_argument("--require-read-token", action="store_true",
                   help="refuse anonymous reads (default: anyone may read public repositories)")
    p.add_argument("--trusted-publisher", action="append", default=[], metavar="ORG",
                   help="organisation reported as a trusted kernel publisher to upstream "
                   "kernels (may repeat; '*' for every organisation)")
    p.add_argument("--graceful-timeout", type=float, default=30.0, metavar="SECONDS",
                   help="on SIGINT/SIGTERM, how long requests in flight may take to finish")
    p.add_argument("--header-timeout", type=float, default=10.0, metavar="SECONDS",
                   help="close a connection whose request headers are not complete this long "
                   "after it connected or got its last response (default: 10)")
    p.add_argument("--body-timeout", type=float, default=30.0, metavar="SECONDS",
                   help="end a request whose body sends nothing for this long, or then "
                   "averages under 1 KiB/s (default: 30)")
    p.add_argument("--max-connections", type=int, default=None, metavar="N",
                   help="open connections at most; past the cap the connection that has waited "
                   "longest for its headers is closed (default: 4096, or less where the "
                   "open-file limit requires)")
    p.add_argument("--page-size", type=int, default=1000, help=argparse.SUPPRESS)  # tests
    p.add_argument("--no-access-log", action="store_true", help="do not log every request")
    p.add_argument("--no-pages", action="store_true",
                   help="serve the Hub API only, without the web pages at / and /kernels/ORG/NAME")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # without the serve extra (starlette, uvicorn) this ends in cli/extras.py's install hint
    from kernelkit.serve.config import Limits, ServeConfig, read_token_file
    from kernelkit.serve.server import serve
    from kernelkit.util.paths import default_hub_dir

    hub = (args.hub or default_hub_dir()).expanduser().resolve()
    if hub.exists() and not hub.is_dir():
        raise KernelkitError(f"hub directory {hub} is a file", hint="pass a directory with --hub")
    write = tuple(t for f in args.token_file for t in read_token_file(f))
    read = tuple(t for f in args.read_token_file for t in read_token_file(f))
    if args.require_read_token and not (write or read):
        raise KernelkitError("--require-read-token needs --token-file or --read-token-file",
                             hint="give the tokens that may read")
    if min(args.header_timeout, args.body_timeout) <= 0 or (
            args.max_connections is not None and args.max_connections < 1):
        raise UsageError("--header-timeout and --body-timeout must be positive, "
                         "--max-connections at least 1")
    limits = Limits(header_timeout=args.header_timeout, body_timeout=args.body_timeout,
                    max_connections=args.max_connections)
    config = ServeConfig(hub_dir=hub, write_tokens=write, read_tokens=read,
                         read_requires_token=args.require_read_token,
                         trusted_publishers=tuple(args.trusted_publisher),
                         page_size=max(1, args.page_size), limits=limits,
                         pages=not args.no_pages)
    mode = "read-write" if write else "read-only (no --token-file)"
    pages = "" if args.no_pages else f"; pages: http://{args.host}:{args.port}/"
    print(f"serving {hub} at http://{args.host}:{args.port} ({mode}); "
          f"clients: HF_ENDPOINT=http://{args.host}:{args.port}{pages}", file=sys.stderr,
          flush=True)
    serve(config, host=args.host, port=args.port, access_log=not args.no_access_log,
          graceful_timeout=args.graceful_timeout)
    return 0
