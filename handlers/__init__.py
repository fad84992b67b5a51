"""Thin functions Connexion calls, one module per OpenAPI tag."""
