"""The API reference at /docs, rendered on the server from the OpenAPI document.

Rendered once, as the application starts (`pages.views`), and kept: every operation with
its parameters and answers, each answer's fields (type, meaning, nullable; from
`pages.shapes`) and an example, the component schemas, the error envelope with examples
of its commonest statuses, a table of contents and an anchor per operation.

Why not Redoc, Scalar or Swagger UI from a registry package: each needs its JavaScript
bundle (~1 MB, a dependency to keep up to date), a Content-Security-Policy that allows
scripts, and shows nothing without JavaScript; the page built here is plain HTML that
works in any browser, with a text browser and a screen reader, searchable with the
browser's find. The document's descriptions use a small part of Markdown (headings,
tables, lists, paragraphs, inline code), which `markdown` below renders after escaping
every character of the source.
"""

from __future__ import annotations

import dataclasses
import re

import orjson
from markupsafe import Markup, escape

from edge.openapi import resolve, scopes_needed
from edge.routes import HTTP_METHODS
from pages import shapes

# The error answers the reference shows with an example, by status.
ERROR_EXAMPLES = (("400", "BadRequest"), ("401", "Unauthorized"), ("403", "Forbidden"),
                  ("404", "NotFound"), ("429", "TooManyRequests"))

_CODE = re.compile(r"`([^`]+)`")
_STRONG = re.compile(r"\*\*([^*]+)\*\*")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


@dataclasses.dataclass(frozen=True)
class Parameter:
    """One parameter of an operation, as the reference lists it."""

    name: str
    where: str
    required: bool
    type: str
    description: Markup


@dataclasses.dataclass(frozen=True)
class Answer:
    """One response of an operation: its status and meaning; for a JSON body, the fields
    of what `data` holds (or of the body), the envelope's parts and an example."""

    code: str
    description: Markup
    model: str | None = None
    envelope: list[shapes.Field] = dataclasses.field(default_factory=list)
    fields: list[shapes.Field] = dataclasses.field(default_factory=list)
    example: str | None = None

    @property
    def is_error(self) -> bool:
        """Whether the answer is an error (the envelope of the Errors section)."""
        return not self.code.startswith(("1", "2", "3"))


@dataclasses.dataclass(frozen=True)
class Model:
    """A component schema of the document, with its fields."""

    name: str
    description: Markup
    fields: list[shapes.Field]

    @property
    def anchor(self) -> str:
        """The fragment id of the schema on the page."""
        return f"schema-{self.name}"


@dataclasses.dataclass(frozen=True)
class Reference:
    """Everything the page shows, made once from the document."""

    description: Markup
    sections: list[Section]
    models: list[Model]
    error_fields: list[shapes.Field]
    errors: list[Answer]

    @classmethod
    def of(cls, document: dict) -> Reference:
        """The reference of `document`."""
        schemas = document.get("components", {}).get("schemas", {})
        models = [Model(name=name, description=markdown(schema.get("description")),
                        fields=shapes.fields(document, schema))
                  for name, schema in schemas.items()
                  if shapes.merged(document, schema).get("properties")]
        answers = document.get("components", {}).get("responses", {})
        errors = [_answer(document, code, answers[name]) for code, name in ERROR_EXAMPLES
                  if name in answers]
        # The envelope every error shares, as the plainest of them (401) has it.
        plain = resolve(document, answers.get("Unauthorized", {})).get("content", {})
        envelope = plain.get("application/json", {}).get("schema", {})
        return cls(description=markdown(document["info"].get("description"), top=2),
                   sections=operations(document), models=models,
                   error_fields=shapes.fields(document, envelope, expand=True), errors=errors)


@dataclasses.dataclass(frozen=True)
class Operation:
    """One operation: method and path, what it does, what it takes and answers."""

    method: str
    path: str
    operation_id: str
    summary: str
    description: Markup
    scopes: list[str]
    parameters: list[Parameter]
    body: str | None
    responses: list[Answer]

    @property
    def anchor(self) -> str:
        """The fragment id of the operation on the page."""
        return f"op-{self.operation_id}"


@dataclasses.dataclass(frozen=True)
class Section:
    """The operations of one tag."""

    name: str
    description: Markup
    operations: list[Operation]


def inline(text: str) -> Markup:
    """Escaped text with `code` and **strong** spans."""
    html = str(escape(text))
    html = _CODE.sub(r"<code>\1</code>", html)
    return Markup(_STRONG.sub(r"<strong>\1</strong>", html))


def markdown(text: str | None, *, top: int = 2) -> Markup:
    """The Markdown subset of the document as HTML; `## x` becomes `<h{top}>`."""
    blocks, html = _blocks(text or ""), []
    for block in blocks:
        first = block[0]
        if heading := re.match(r"(#{1,6})\s+(.*)", first):
            level = min(6, top + len(heading.group(1)) - 2)
            html.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
        elif first.startswith("|"):
            html.append(_table(block))
        elif re.match(r"[-*]\s", first):
            items = "".join(f"<li>{inline(line[2:].strip())}</li>" for line in block)
            html.append(f"<ul>{items}</ul>")
        else:
            html.append(f"<p>{inline(' '.join(line.strip() for line in block))}</p>")
    return Markup("\n".join(html))


def _blocks(text: str) -> list[list[str]]:
    """Runs of non-blank lines; a heading is a block of its own."""
    blocks, current = [], []
    for line in text.splitlines():
        if not line.strip():
            if current:
                blocks.append(current)
            current = []
        elif line.lstrip().startswith("#"):
            if current:
                blocks.append(current)
            blocks.append([line.strip()])
            current = []
        else:
            current.append(line)
    if current:
        blocks.append(current)
    return blocks


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in _CELL_SPLIT.split(line.strip().strip("|"))]


def _table(lines: list[str]) -> str:
    head, rows = _cells(lines[0]), [_cells(line) for line in lines[2:]]
    header = "".join(f'<th scope="col">{inline(cell)}</th>' for cell in head)
    body = "".join("<tr>" + "".join(f"<td>{inline(cell)}</td>" for cell in row) + "</tr>"
                   for row in rows)
    return f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"


def _type(schema: dict) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    kind = schema.get("type", "")
    kind = " | ".join(kind) if isinstance(kind, list) else kind
    if "enum" in schema:
        kind += " (" + ", ".join(str(value) for value in schema["enum"]) + ")"
    if schema.get("format"):
        kind += f", {schema['format']}"
    return kind


def _body(document: dict, operation: dict) -> str | None:
    if "requestBody" not in operation:
        return None
    body = resolve(document, operation["requestBody"])
    return ", ".join(f"{media}: {_type(content.get('schema', {}))}"
                     for media, content in body.get("content", {}).items())


def operations(document: dict, prefix: str = "/v1") -> list[Section]:
    """Every operation of `document`, grouped by its first tag in the document's tag order."""
    by_tag: dict[str, list[Operation]] = {tag["name"]: [] for tag in document.get("tags", [])}
    for path, item in document["paths"].items():
        for method in HTTP_METHODS:
            if method not in item:
                continue
            operation = item[method]
            parameters = [resolve(document, p)
                          for p in [*item.get("parameters", []), *operation.get("parameters", [])]]
            responses = [_answer(document, code, answer)
                         for code, answer in operation.get("responses", {}).items()]
            tag = (operation.get("tags") or ["other"])[0]
            by_tag.setdefault(tag, []).append(Operation(
                method=method.upper(), path=prefix + path, operation_id=operation["operationId"],
                summary=operation.get("summary", ""),
                description=markdown(operation.get("description"), top=4),
                scopes=sorted(scopes_needed(document, operation) or ()),
                parameters=[Parameter(name=p["name"], where=p["in"],
                                      required=bool(p.get("required")),
                                      type=_type(p.get("schema", {})),
                                      description=markdown(p.get("description")))
                            for p in parameters],
                body=_body(document, operation), responses=responses))
    descriptions = {tag["name"]: tag.get("description", "") for tag in document.get("tags", [])}
    return [Section(name=tag, description=inline(descriptions.get(tag, "")), operations=found)
            for tag, found in by_tag.items() if found]


def _answer(document: dict, code: str, answer: dict) -> Answer:
    """A response: fields and an example for a JSON body (a success's made from its schema,
    an error's as the document gives it)."""
    answer = resolve(document, answer)
    description = markdown(answer.get("description", ""))
    content = answer.get("content", {}).get("application/json")
    if content is None or "schema" not in content:
        return Answer(code=code, description=description)
    schema = content["schema"]
    body = shapes.merged(document, schema)
    data = body.get("properties", {}).get("data")
    shown = data if data is not None and "meta" in body.get("properties", {}) else schema
    envelope = shapes.fields(document, schema) if shown is data else []
    value = content.get("example")
    if value is None:
        value = shapes.example(document, schema)
    return Answer(code=code, description=description, model=shapes.model_name(shown),
                  envelope=envelope, fields=shapes.fields(document, _object_of(document, shown)),
                  example=orjson.dumps(value, option=orjson.OPT_INDENT_2).decode())


def _object_of(document: dict, schema: dict) -> dict:
    """The object schema a body or `data` holds (an array's items)."""
    schema = shapes.merged(document, schema)
    if schema.get("type") == "array" and "items" in schema:
        return shapes.merged(document, schema["items"])
    return schema
