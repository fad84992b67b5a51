"""What the domain reaches outside Python, without domain knowledge of its own: statements
on a pooled DBAPI connection, the LISTEN watcher of a PostgreSQL database, mail over SMTP."""
