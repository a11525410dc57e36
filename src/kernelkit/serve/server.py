"""Run the application with uvicorn: access log, graceful shutdown, concurrent requests.

uvicorn handles SIGINT/SIGTERM: it stops accepting connections, lets requests in flight finish
(up to ``graceful_timeout`` seconds) and exits. Handlers run git in a thread pool, so slow
requests never block the event loop.
"""

from __future__ import annotations

import logging
from typing import Any

from kernelkit.serve.config import ServeConfig

ACCESS_FORMAT = '%(asctime)s %(client_addr)s "%(request_line)s" %(status_code)s'


def log_config(level: str = "info") -> dict[str, Any]:
    """uvicorn's logging: one access-log line per request, kernelkit.serve messages too."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "default": {"()": "uvicorn.logging.DefaultFormatter",
                        "fmt": "%(asctime)s %(levelprefix)s %(message)s", "use_colors": False},
            "access": {"()": "uvicorn.logging.AccessFormatter", "fmt": ACCESS_FORMAT,
                       "use_colors": False},
        },
        "handlers": {
            "default": {"class": "logging.StreamHandler", "formatter": "default",
                        "stream": "ext://sys.stderr"},
            "access": {"class": "logging.StreamHandler", "formatter": "access",
                       "stream": "ext://sys.stderr"},
        },
        "loggers": {
            "uvicorn": {"handlers": ["default"], "level": level.upper(), "propagate": False},
            "uvicorn.error": {"level": level.upper()},
            "uvicorn.access": {"handlers": ["access"], "level": "INFO", "propagate": False},
            "kernelkit.serve": {"handlers": ["default"], "level": level.upper(),
                                "propagate": False},
        },
    }


def serve(config: ServeConfig, *, host: str = "127.0.0.1", port: int = 8000,
          access_log: bool = True, graceful_timeout: float = 30.0,
          log_level: str = "info") -> None:
    """Serve ``config.hub_dir`` until interrupted."""
    import uvicorn

    from kernelkit.serve.app import create_app

    config.hub_dir.mkdir(parents=True, exist_ok=True)
    logging.getLogger("kernelkit.serve").debug("serving %s", config.hub_dir)
    uvicorn.run(create_app(config), host=host, port=port, access_log=access_log,
                log_config=log_config(log_level),
                timeout_graceful_shutdown=max(1, round(graceful_timeout)),
                server_header=False, proxy_headers=False)
