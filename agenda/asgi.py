"""The ASGI entry point for servers: `uvicorn agenda.asgi:app`."""

import logging

from agenda.app import create_app

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
app = create_app()
