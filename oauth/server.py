"""The authorization server: Authlib's grants and endpoints, set to the specification.

What Authlib does not do by default, and this module does (STACK-NOTES):
PKCE with S256 for every client, nothing else; codes of 60 seconds consumed
with one conditional UPDATE, a replayed code revoking its whole family;
refresh tokens rotated on every use, a reused one revoking the family; access
tokens of 60 minutes and refresh tokens of 30 days with the service's
prefixes, stored as hashes only; `resource` (RFC 8707) only for {site_url}/mcp;
`iss` on every redirect of the authorization endpoint (see `views`); the
request URL taken from the configured site, so TLS termination in front of the
service never makes Authlib refuse a request as insecure.
"""

from __future__ import annotations

from urllib.parse import urlencode

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.integrations.flask_oauth2.requests import FlaskOAuth2Payload, FlaskOAuth2Request
from authlib.oauth2.rfc6749 import OAuth2Error, OAuth2Request, grants
from authlib.oauth2.rfc6749.errors import InvalidGrantError, InvalidRequestError
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from flask import request as flask_request

from edge.context import keep_on_error, session, settings
from models import oauth
from models.db import new_id, now
from models.people import Person
from oauth import documents


class InvalidTargetError(OAuth2Error):
    """RFC 8707: the `resource` is not this server's protected resource."""

    error = "invalid_target"
    description = "The only resource of this server is its MCP endpoint."


def mcp_resource() -> str:
    """The one protected resource tokens are issued for."""
    return f"{settings().site_url}/mcp"


def _check_resource(payload: dict) -> None:
    resource = payload.get("resource")
    if resource is not None and resource.rstrip("/") != mcp_resource():
        raise InvalidTargetError()


class SiteRequest(FlaskOAuth2Request):
    """The Flask request, addressed by the configured public site URL (the address the
    service is reached at, whatever host and scheme the proxy in front of it uses)."""

    def __init__(self, request):
        OAuth2Request.__init__(self, request.method,
                               f"{settings().site_url}{request.full_path.rstrip('?')}",
                               headers=request.headers)
        self._request = request
        self.payload = FlaskOAuth2Payload(request)


class AuthorizeRequest(OAuth2Request):
    """An authorization request rebuilt from its query (kept while the person signs in)."""

    def __init__(self, params: dict[str, str]):
        super().__init__("GET", f"{settings().site_url}/oauth/authorize?{urlencode(params)}")
        self.payload = BasicOAuth2Payload(params)
        self._params = params

    @property
    def args(self):
        return self._params

    @property
    def form(self):
        return {}


class StrictCodeChallenge(CodeChallenge):
    """PKCE required for every client, with S256 only (no plain, no missing challenge)."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

    def validate_code_challenge(self, grant, redirect_uri):
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("Missing 'code_challenge': PKCE (S256) is required.")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("'code_challenge_method' must be S256.")
        super().validate_code_challenge(grant, redirect_uri)

    def validate_code_verifier(self, grant, result):
        if not grant.request.form.get("code_verifier"):
            raise InvalidRequestError("Missing 'code_verifier'.")
        super().validate_code_verifier(grant, result)


class AuthorizationCodeGrant(grants.AuthorizationCodeGrant):
    """The code grant; the consent view sets `request.organisation_id` and
    `request.granted_scope` (what the person allowed)."""

    TOKEN_ENDPOINT_AUTH_METHODS = list(oauth.AUTH_METHODS)

    def validate_authorization_request(self):
        redirect_uri = super().validate_authorization_request()
        try:
            _check_resource(self.request.payload.data)
        except OAuth2Error as error:
            error.redirect_uri = redirect_uri
            raise
        return redirect_uri

    def save_authorization_code(self, code, request):
        moment = now()
        # What the person consented to (the consent view sets both); never more than asked.
        scope = " ".join(s for s in request.granted_scope.split() if s in request.scope.split())
        grant = oauth.OAuthGrant(
            id=new_id("grt"), client_id=request.client.id, person_id=request.user.id,
            organisation_id=request.organisation_id, scope=scope, resource=mcp_resource(),
            created_at=moment)
        session().add(grant)
        session().flush()
        session().add(oauth.OAuthCode(
            code_hash=oauth.digest(code), grant_id=grant.id,
            redirect_uri=request.payload.redirect_uri or "",
            code_challenge=request.payload.data["code_challenge"],
            code_challenge_method="S256", scope=scope,
            expires_at=moment + oauth.CODE_LIFETIME))
        session().flush()

    def query_authorization_code(self, code, client):
        found = oauth.consume_code(session(), code, client_id=client.id, now=now())
        if found is None:
            _revoke_replayed(oauth.replayed_code_grant(session(), code))
        return found

    def validate_token_request(self):
        _check_resource(self.request.payload.data)
        super().validate_token_request()

    def delete_authorization_code(self, authorization_code):
        """Nothing to do: `query_authorization_code` consumed it."""

    def authenticate_user(self, authorization_code):
        grant = session().get(oauth.OAuthGrant, authorization_code.grant_id)
        return session().get(Person, grant.person_id)


class RefreshTokenGrant(grants.RefreshTokenGrant):
    """Refresh, rotating the refresh token every time."""

    TOKEN_ENDPOINT_AUTH_METHODS = list(oauth.AUTH_METHODS)
    INCLUDE_NEW_REFRESH_TOKEN = True

    def _validate_request_token(self, client):
        _check_resource(self.request.payload.data)
        value = self.request.form.get("refresh_token")
        if value is None:
            raise InvalidRequestError("Missing 'refresh_token' in request.")
        found = oauth.consume_refresh_token(session(), value, client_id=client.id, now=now())
        if found is None:
            _revoke_replayed(oauth.reused_refresh_grant(session(), value))
            raise InvalidGrantError("The refresh token is not valid.")
        return found

    def authenticate_user(self, refresh_token):
        grant = session().get(oauth.OAuthGrant, refresh_token.grant_id)
        return session().get(Person, grant.person_id)

    def revoke_old_credential(self, refresh_token):
        """Nothing to do: `_validate_request_token` used it up."""


def _revoke_replayed(grant_id: str | None) -> None:
    """A code or refresh token used twice: revoke its family, kept although the request
    then fails."""
    if grant_id is None:
        return
    oauth.revoke_grant(session(), grant_id, now=now())
    keep_on_error()


class Revocation(RevocationEndpoint):
    """RFC 7009 for public and confidential clients; unknown tokens are not an error."""

    CLIENT_AUTH_METHODS = list(oauth.AUTH_METHODS)

    def create_endpoint_response(self, request):
        client = self.authenticate_endpoint_client(request)
        self.check_params(request, client)
        oauth.revoke_token(session(), request.form["token"], client_id=client.id, now=now())
        return 200, {}, [("Content-Type", "application/json"), ("Cache-Control", "no-store")]


class Server(AuthorizationServer):
    """Authlib's Flask server on the service's database session and public address."""

    def create_oauth2_request(self, request):
        if isinstance(request, OAuth2Request):
            return request
        return SiteRequest(flask_request)

    def query_client(self, client_id):
        if not client_id:
            return None
        if documents.is_document_url(client_id):
            return _document_client(client_id)
        return session().get(oauth.OAuthClient, client_id)

    def save_token(self, token, request):
        source = request.authorization_code or request.refresh_token
        oauth.store_tokens(session(), grant_id=source.grant_id,
                           access_token=token["access_token"],
                           refresh_token=token.get("refresh_token"), scope=token["scope"],
                           now=now())


def _document_client(url: str):
    """The client behind a Client ID Metadata Document URL; None when it is not usable.

    Handlers never fetch (oauth/documents.py): an authorization request's document was
    fetched before it reached this thread (oauth/prefetch.py). A token or revocation
    request comes later, with the client known from its authorization: when its document
    is no longer kept, the record its last authorization left serves."""
    kept = documents.cached(url)
    if kept is None:
        return oauth.known_document_client(session(), url)
    if isinstance(kept, documents.DocumentError):
        return None
    try:
        return oauth.document_client(session(), url, kept, now=now())
    except oauth.RegistrationError:
        return None


def _generate_token(grant_type, client, user=None, scope=None, expires_in=None,
                    include_refresh_token=True):
    token = {"token_type": "Bearer", "access_token": oauth.new_secret(oauth.ACCESS_PREFIX),
             "expires_in": oauth.ACCESS_LIFETIME, "scope": scope or ""}
    if include_refresh_token:
        token["refresh_token"] = oauth.new_secret(oauth.REFRESH_PREFIX)
    return token


def build_server(flask_app) -> Server:
    """The authorization server of `flask_app`."""
    server = Server()
    server.init_app(flask_app)
    server.register_token_generator("default", _generate_token)
    server.register_grant(AuthorizationCodeGrant, [StrictCodeChallenge(required=True)])
    server.register_grant(RefreshTokenGrant)
    server.register_endpoint(Revocation)
    return server
