"""Database models, the session, migrations and the domain functions that work on them.

Nothing in this package knows about Flask or Connexion: REST handlers, MCP tools
and the command line all call the same functions here.
"""
