"""The server's log lines (agenda/logs.py): logging's own layout, tracebacks kept."""

import logging
import sys

from agenda.logs import LINE, LineFormatter


def _record(level: int, message: str, *args, exc_info=None) -> logging.LogRecord:
    return logging.LogRecord("agenda.access", level, __file__, 1, message, args, exc_info)


def test_a_line_is_written_as_logging_writes_its_layout():
    ours, logging_own = LineFormatter(), logging.Formatter(LINE)
    for record in (_record(logging.INFO, "%s %s %s %.1fms request_id=%s", "GET", "/v1/events",
                           200, 1.25, "b0c1"),
                   _record(logging.WARNING, "%d%% of %s", 100, "them"),
                   _record(logging.INFO, "no arguments: %s")):
        assert ours.format(record) == logging_own.format(record)
    assert ours.format(_record(logging.INFO, "%s", "x")).endswith(" INFO agenda.access x")


def test_a_line_with_an_exception_keeps_its_traceback_and_stack():
    try:
        raise ValueError("the cause")
    except ValueError:
        record = _record(logging.ERROR, "failed %s", "here", exc_info=sys.exc_info())
    line = LineFormatter().format(record)
    assert line.splitlines()[0].endswith(" ERROR agenda.access failed here")
    assert "Traceback (most recent call last)" in line
    assert line.rstrip().endswith("ValueError: the cause")
    stacked = _record(logging.WARNING, "look")
    stacked.stack_info = "Stack (most recent call last):\n  File x"
    assert LineFormatter().format(stacked).endswith("Stack (most recent call last):\n  File x")
