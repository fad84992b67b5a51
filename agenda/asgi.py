"""The ASGI entry point for servers: `uvicorn agenda.asgi:app`."""

from agenda.app import create_app

app = create_app()
