"""The server's log lines (agenda/logs.py): logging's own layout, tracebacks kept, a line
written straight into the batch only where logging would write it there alone."""

import io
import logging
import re
import sys
import uuid

from agenda.logs import LINE, BatchingHandler, LineFormatter, direct_writer


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


def _logger(*handlers: logging.Handler) -> logging.Logger:
    """A logger of its own with `handlers`, its records kept from the root's handlers."""
    logger = logging.getLogger(f"agenda.tests.{uuid.uuid4().hex}")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    for handler in handlers:
        logger.addHandler(handler)
    return logger


def _batching() -> BatchingHandler:
    handler = BatchingHandler(3600)
    handler.setFormatter(LineFormatter())
    handler.setStream(io.StringIO())
    return handler


def test_a_direct_line_is_the_line_logging_writes():
    handler = _batching()
    logger = _logger(handler)
    write = direct_writer(logger)
    logger.info("%s", "GET /v1/events 200 1.2ms request_id=b0c1")
    write("GET /v1/events 200 1.2ms request_id=b0c1")
    logger.warning("%s", "after both")  # a warning writes the batch out at once
    through_logging, direct, warning = handler.stream.getvalue().splitlines()
    time = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}"
    assert re.fullmatch(time + rf" INFO {logger.name} GET /v1/events 200 1\.2ms "
                                r"request_id=b0c1", direct)
    assert direct.partition(" INFO ")[2] == through_logging.partition(" INFO ")[2]
    assert through_logging[:19] <= direct[:19] <= warning[:19]


def test_a_direct_line_follows_the_levels_of_the_logger_and_the_handler():
    handler = _batching()
    logger = _logger(handler)
    write = direct_writer(logger)
    logger.setLevel(logging.WARNING)
    write("not written: the logger's level")
    logger.setLevel(logging.INFO)
    handler.setLevel(logging.ERROR)
    write("not written: the handler's level")
    handler.setLevel(logging.NOTSET)
    write("written")
    handler.flush()
    assert handler.stream.getvalue().splitlines()[0].endswith(" written")
    assert len(handler.stream.getvalue().splitlines()) == 1


def test_lines_go_through_logging_where_logging_does_more_than_write_them():
    # Another handler on the way up (a test's capture, say), a filter on the logger or on
    # the handler, a formatter of another layout, or a handler of another kind.
    parent = _logger(logging.NullHandler())
    child = logging.getLogger(f"{parent.name}.child")
    child.addHandler(_batching())
    assert direct_writer(child) is None
    filtered = _logger(_batching())
    filtered.addFilter(lambda record: True)
    assert direct_writer(filtered) is None
    handler = _batching()
    handler.addFilter(lambda record: True)
    assert direct_writer(_logger(handler)) is None
    handler = _batching()
    handler.setFormatter(logging.Formatter(LINE))
    assert direct_writer(_logger(handler)) is None
    assert direct_writer(_logger(logging.StreamHandler(io.StringIO()))) is None
    # Its own handler, not propagating: what logging writes is that handler's line alone.
    child.propagate = False
    assert direct_writer(child) is not None
