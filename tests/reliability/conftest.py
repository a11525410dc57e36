"""The reliability suite: concurrency, crash injection, hostile hubs, fuzzing.

Runnable alone (``pytest tests/reliability``), bounded in time. ``KERNELKIT_RELIABILITY=full``
selects the full configuration (16 processes, >= 100 kill -9 injections, thousands of fuzz
cases per target); the default small one is for CI (a few minutes on 2 cores).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.common import CONFIG, REPORT


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.reliability)


def pytest_report_header() -> str:
    return f"kernelkit reliability configuration: {CONFIG.name}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """What the run counted (kill -9 injections, fuzz cases), after every test, however the
    tests were selected or ordered."""
    counted = {title: counts for title, counts in REPORT.items() if counts}
    if counted:
        terminalreporter.section("kernelkit reliability counts")
    for title, counts in counted.items():
        terminalreporter.write_line(f"{title}: {counts} total {sum(counts.values())}")
