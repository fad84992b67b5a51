"""The ASGI entry point for servers: `uvicorn agenda.asgi:app`."""

import gc
import logging

from agenda.app import create_app

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
app = create_app()
# What is loaded now (~200,000 objects: modules, the document, Connexion's operations) lives
# as long as the process. Frozen, the cyclic collector skips it: on the full path of GET
# /events a full collection came every ~170 requests and took ~120 ms (12% of the CPU,
# every request of the worker waiting); frozen, ~3 ms.
gc.collect()
gc.freeze()
