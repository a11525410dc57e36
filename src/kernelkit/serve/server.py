"""Run the application with uvicorn: access log, graceful shutdown, concurrent requests.

uvicorn handles SIGINT/SIGTERM: it stops accepting connections, lets requests in flight finish
(up to ``graceful_timeout`` seconds) and exits. Handlers run git in a thread pool, so slow
requests never block the event loop. Slow and many clients are held off by
:mod:`kernelkit.serve.guard` (header timeout, connection cap) and every log line passes its
rate limit, so no client can exhaust file descriptors or grow the log without bound.
"""

from __future__ import annotations

import logging
from typing import Any

from kernelkit.serve.config import ServeConfig

ACCESS_FORMAT = '%(asctime)s %(client_addr)s "%(request_line)s" %(status_code)s'


def log_config(level: str = "info", rate: float = 20.0) -> dict[str, Any]:
    """uvicorn's logging: one access-log line per request, kernelkit.serve messages too; each
    kind of message at most ``rate`` lines a second (access lines ``10 * rate``), the rest
    counted (``guard.RateLimit``). asyncio's and any other logger's messages go through the
    same limit (an exhausted accept loop logs a traceback per attempt)."""
    handler = {"class": "logging.StreamHandler", "formatter": "default",
               "stream": "ext://sys.stderr", "filters": ["rate"]}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {
            "rate": {"()": "kernelkit.serve.guard.RateLimit", "rate": rate},
            "access_rate": {"()": "kernelkit.serve.guard.RateLimit", "rate": 10 * rate},
        },
        "formatters": {
            "default": {"()": "uvicorn.logging.DefaultFormatter",
                        "fmt": "%(asctime)s %(levelprefix)s %(message)s", "use_colors": False},
            "access": {"()": "uvicorn.logging.AccessFormatter", "fmt": ACCESS_FORMAT,
                       "use_colors": False},
        },
        "handlers": {
            "default": handler,
            "access": {**handler, "formatter": "access", "filters": ["access_rate"]},
        },
        "root": {"handlers": ["default"], "level": "WARNING"},
        "loggers": {
            "uvicorn": {"handlers": ["default"], "level": level.upper(), "propagate": False},
            "uvicorn.error": {"level": level.upper()},
            "uvicorn.access": {"handlers": ["access"], "level": "INFO", "propagate": False},
            "kernelkit.serve": {"handlers": ["default"], "level": level.upper(),
                                "propagate": False},
            "asyncio": {"handlers": ["default"], "level": "WARNING", "propagate": False},
        },
    }


def serve(config: ServeConfig, *, host: str = "127.0.0.1", port: int = 8000,
          access_log: bool = True, graceful_timeout: float = 30.0,
          log_level: str = "info") -> None:
    """Serve ``config.hub_dir`` until interrupted."""
    import uvicorn

    from kernelkit.serve.app import create_app
    from kernelkit.serve.guard import connection_budget, guarded_protocol, raise_fd_limit

    config.hub_dir.mkdir(parents=True, exist_ok=True)
    limits = config.limits
    cap, backlog = connection_budget(limits, raise_fd_limit())
    logging.getLogger("kernelkit.serve").debug("serving %s, at most %d connections",
                                               config.hub_dir, cap)
    uvicorn.run(create_app(config), host=host, port=port, access_log=access_log,
                log_config=log_config(log_level, limits.log_lines_per_second),
                http=guarded_protocol(limits, cap), backlog=backlog,
                timeout_graceful_shutdown=max(1, round(graceful_timeout)),
                server_header=False, proxy_headers=False)
