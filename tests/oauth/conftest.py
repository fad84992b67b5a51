"""Each OAuth test starts with fresh per-address counters (registrations, sign-ins and token
requests are limited per address, and every test client is the same address)."""

import pytest

from edge.limits import MemoryCounters


@pytest.fixture(autouse=True)
def fresh_counters(app, monkeypatch):
    monkeypatch.setattr(app.service.usage, "store", MemoryCounters())
