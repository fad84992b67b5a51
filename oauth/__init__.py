"""The OAuth 2.1 authorization server of the MCP endpoint (Authlib) and its pages."""
