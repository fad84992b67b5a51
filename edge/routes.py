"""The route table: every operation of the document, derived once, for every layer that
needs one (admission's gates, the response cache's public answers, the door's lane,
405 answers); Connexion builds its own router from the same document."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable

from edge.arguments import Arguments, validity
from edge.openapi import path_pattern, resolve, scopes_needed

HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


@dataclasses.dataclass(frozen=True)
class Gate:
    """What a request must pass (edge/admission.py): the scopes it needs, and the route its
    use counts under."""

    route: str
    needed: frozenset[str]


@dataclasses.dataclass(frozen=True, eq=False)
class Operation:
    """One operation of the document, as the layers in front of the handlers see it (one
    object per operation: equal only to itself)."""

    method: str  # upper case
    route: str  # the path template with the prefix: "/v1/events/{id}"
    handler: str  # the dotted name Connexion resolves: "handlers.events.get_event"
    # The scopes its security requirements name; None when it needs no token.
    needed: frozenset[str] | None
    # A GET whose document declares a 304: the same answer for every token.
    public: bool
    # (lower-case name, whether a value is valid) of each header parameter, by its schema.
    headers: tuple[tuple[bytes, Callable[[str], bool]], ...]
    # A public answer's handler arguments, read from a request as Connexion reads them.
    arguments: Arguments | None = None

    @functools.cached_property
    def gate(self) -> Gate:
        """The gate of a request for this operation (one that needs a token)."""
        return Gate(self.route, self.needed or frozenset())


class RouteTable:
    """The operations of a document under a prefix, looked up by request or by handler."""

    def __init__(self, document: dict, prefix: str):
        self.operations: list[Operation] = []
        # Paths without a parameter are found by a dict look-up, the others by their pattern.
        self._literal: dict[str, dict[str, Operation]] = {}
        self._paths: list[tuple[re.Pattern, str, dict[str, Operation]]] = []
        for template, item in document["paths"].items():
            by_method = {}
            for method in (m for m in HTTP_METHODS if m in item):
                definition = item[method]
                parameters = [resolve(document, p) for p in
                              [*item.get("parameters", []), *definition.get("parameters", [])]]
                public = method == "get" and "304" in definition.get("responses", {})
                operation = Operation(
                    method=method.upper(), route=prefix + template,
                    handler=f"{definition['x-openapi-router-controller']}."
                            f"{definition['operationId']}",
                    needed=scopes_needed(document, definition),
                    public=public,
                    headers=tuple((p["name"].lower().encode("latin-1"),
                                   validity(p.get("schema", {})))
                                  for p in parameters if p.get("in") == "header"),
                    arguments=Arguments(document, prefix + template, parameters) if public
                    else None)
                by_method[operation.method] = operation
                self.operations.append(operation)
            if "{" in template:
                self._paths.append((path_pattern(prefix + template), prefix + template,
                                    by_method))
            else:
                self._literal[prefix + template] = by_method
        self._by_handler = {operation.handler: operation for operation in self.operations}
        self._by_id = {operation.handler.rpartition(".")[2]: operation
                       for operation in self.operations}

    def find(self, method: str, path: str) -> Operation | None:
        """The operation answering `method` on the concrete request `path` (GET's for HEAD)."""
        by_method = self._methods(path)
        return by_method.get("GET" if method == "HEAD" else method) if by_method else None

    def _methods(self, path: str) -> dict[str, Operation] | None:
        found = self._literal.get(path)
        if found is not None:
            return found
        for pattern, _route, by_method in self._paths:
            if pattern.fullmatch(path):
                return by_method
        return None

    def of(self, handler) -> Operation:
        """The operation a handler function answers (`routes.of(organiser.scan_ticket)`)."""
        return self._by_handler[f"{handler.__module__}.{handler.__name__}"]

    def identified(self, operation_id: str) -> Operation:
        """The operation of the document's `operationId` (what an MCP tool answers as)."""
        return self._by_id[operation_id]

    def named(self, handler_name: str) -> Operation:
        """The operation of the dotted handler name Connexion routed a request to."""
        return self._by_handler[handler_name]

    def templates(self) -> list[str]:
        """Every route template, as request usage is counted under (GET /me)."""
        return sorted({operation.route for operation in self.operations})

    def allowed_methods(self, path: str) -> list[str]:
        """The methods the document declares for a concrete request path (HEAD with GET)."""
        by_method = self._methods(path)
        if by_method is None:
            return []
        return sorted(set(by_method) | ({"HEAD"} if "GET" in by_method else set()))
