"""Hub port and backends (see ``port.py``)."""

from kernelkit.hub.port import FileEntry, Hub, Refs

__all__ = ["FileEntry", "Hub", "Refs"]
