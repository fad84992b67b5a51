"""The ASGI entry point for servers: `uvicorn agenda.asgi:app`."""

import gc
import logging

from agenda.app import create_app
from agenda.logs import BatchingHandler, LineFormatter
from agenda.settings import load

settings = load()
# What a log line does not show is not looked up for each (the logging HOWTO's
# "Optimization"): the caller's file and line, the thread, the process. With the time
# written once a second, a line costs ~19 µs instead of ~32 (one a request: the access log).
logging._srcfile = None  # noqa: SLF001 - the documented switch
logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
handler = BatchingHandler(settings.log_flush_seconds)
handler.setFormatter(LineFormatter())
logging.basicConfig(level=logging.INFO, handlers=[handler])
app = create_app()
# What is loaded now (~200,000 objects: modules, the document, Connexion's operations) lives
# as long as the process. Frozen, the cyclic collector skips it: on the full path of GET
# /events a full collection came every ~170 requests and took ~120 ms (12% of the CPU,
# every request of the worker waiting); frozen, ~3 ms.
gc.collect()
gc.freeze()
# What a request makes lives as long as the request, and dozens are under way at once.
# Collected every 700 new objects (Python's default), each young collection walked the
# objects of the requests still running and moved them on to the older generations, which
# filled with them: the oldest was walked whole every ~4 s (~36 ms of a worker's CPU each,
# every request of the worker waiting). Collected every 7,000 new objects, and each older
# generation once every 20 collections of the one before (not 10), most of them are gone
# by then: a miss of the long tail costs 5-8% less CPU, and p99 fell by a third or more
# (bench/RESULTS.md, "The cyclic collector's thresholds").
gc.set_threshold(7000, 20, 20)
