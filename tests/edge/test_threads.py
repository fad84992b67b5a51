"""The threads a request's blocking work is handed to (edge/threads.py)."""

import asyncio
import threading

import pytest

from edge.threads import Threads


def test_calls_run_on_the_threads_and_their_outcomes_come_back_to_the_loop():
    threads = Threads(2, "test")

    def where(value):
        return value, threading.current_thread().name

    def failing():
        raise LookupError("not there")

    async def scenario():
        done = await asyncio.gather(*(threads.run(where, number) for number in range(20)))
        with pytest.raises(LookupError, match="not there"):
            await threads.run(failing)
        return done

    try:
        done = asyncio.run(scenario())
    finally:
        threads.shutdown()
    assert [value for value, _ in done] == list(range(20))
    assert {name for _, name in done} <= {"test-0", "test-1"}
    assert threading.current_thread().name not in {name for _, name in done}


def test_a_call_cancelled_before_a_thread_takes_it_is_not_run():
    """A request that went on without its call (a deadline passed while the threads were
    busy) does not leave the threads work to do for nobody."""
    threads = Threads(1, "test")
    release, ran = threading.Event(), []

    async def scenario():
        busy = threads.run(release.wait, 5)
        waiting = threads.run(ran.append, "late")
        waiting.cancel()
        release.set()
        await busy
        assert await threads.run(ran.append, "next") is None

    try:
        asyncio.run(scenario())
    finally:
        threads.shutdown()
    assert ran == ["next"]


def test_a_call_whose_request_gave_up_runs_to_its_end_and_its_outcome_is_dropped():
    threads = Threads(1, "test")
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    def slow():
        started.set()
        release.wait(5)
        finished.set()
        return "dropped"

    async def scenario():
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05):
                await threads.run(slow)
        assert started.is_set()
        release.set()
        return await threads.run(lambda: "after")

    try:
        assert asyncio.run(scenario()) == "after"
    finally:
        threads.shutdown()
    assert finished.is_set()


def test_shut_down_the_threads_end_and_take_no_more_calls():
    threads = Threads(2, "test")

    async def scenario():
        await threads.run(lambda: None)
        threads.shutdown()
        with pytest.raises(RuntimeError):
            threads.run(lambda: None)

    asyncio.run(scenario())
    for thread in threads._threads:  # noqa: SLF001 - what shutting down promises
        thread.join(timeout=5)
        assert not thread.is_alive()
