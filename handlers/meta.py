"""The two endpoints without a token: the terms and the OpenAPI document."""

from flask import Response

from edge.context import service, settings
from handlers import envelope
from openapi.schemas.terms import TermsSchema

terms_schema = TermsSchema()


def get_terms():
    """The terms of use, with the attribution they require."""
    return envelope.public(terms_schema.dump(settings()))


def get_openapi():
    """The OpenAPI 3.1 document the router dispatches on, serialized once."""
    return Response(service().document_json, mimetype="application/json",
                    headers={"Cache-Control": "public, max-age=300"})
