"""The fixed genre list is the same in the code, the migration and the document."""

from sqlalchemy import select

from edge import openapi
from models.genres import GENRES, Genre


def test_the_seeded_list_is_the_code_list(db):
    seeded = db.execute(select(Genre.name, Genre.group).order_by(Genre.position)).all()
    assert [tuple(row) for row in seeded] == list(GENRES)
    assert len({slug for slug in db.scalars(select(Genre.slug))}) == len(GENRES)


def test_the_document_accepts_exactly_the_listed_names():
    document = openapi.load_document("http://127.0.0.1:8080/v1")
    enum = document["components"]["schemas"]["GenreName"]["enum"]
    assert sorted(enum) == sorted(name for name, _group in GENRES)
