"""The long tail's URLs (bench/longtail.py) as MCP tool calls: the same searches and detail
pages asked by an assistant, one JSON-RPC `tools/call` body a line, for bench/longtail.lua
(`-- CALLS_FILE S /mcp`).

    python bench/mcp.py LONG_TAIL_FILE > calls.txt

Each URL becomes the call of the tool that answers its REST operation, its parameters
named as the tool names them (`from` is `date_from`, `facets` a list); URLs no tool asks
(none in the long tail today) are left out.
"""

from __future__ import annotations

import sys
import urllib.parse

import orjson

# Tool by the path's first segment after /v1: (its list's tool, its detail's tool).
TOOLS = {"events": ("search_events", "get_event"), "venues": ("search_venues", "get_venue"),
         "artists": ("search_artists", "get_artist"),
         "organisations": ("search_organisations", "get_organisation"),
         "cities": ("list_cities", None), "genres": ("list_genres", None)}
RENAMED = {"from": "date_from", "to": "date_to"}
BOOLEAN = {"has_tickets", "with_events", "verified"}
INTEGER = {"limit", "radius_km"}
NUMBER = {"lat", "lng", "max_price", "min_price"}


def call(url: str) -> bytes | None:
    """The `tools/call` body asking what the GET of `url` asks, if a tool asks it."""
    parts = urllib.parse.urlsplit(url)
    segments = parts.path.removeprefix("/v1/").split("/")
    tools = TOOLS.get(segments[0])
    if tools is None or len(segments) > 2 or (len(segments) == 2 and tools[1] is None):
        return None
    if len(segments) == 2:
        name, arguments = tools[1], {"id": urllib.parse.unquote(segments[1])}
    else:
        name, arguments = tools[0], {}
    for key, value in urllib.parse.parse_qsl(parts.query):
        arguments[RENAMED.get(key, key)] = (
            value == "true" if key in BOOLEAN else int(value) if key in INTEGER
            else float(value) if key in NUMBER else value.split(",") if key == "facets"
            else value)
    return orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                         "params": {"name": name, "arguments": arguments}})


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as urls:
        for url in urls:
            body = call(url.strip())
            if body is not None:
                sys.stdout.write(body.decode() + "\n")


if __name__ == "__main__":
    main()
