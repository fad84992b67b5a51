"""The domain's errors are kinds with a message and fields; they know no transport."""

import inspect

from models import errors

KINDS = [kind for _name, kind in inspect.getmembers(errors, inspect.isclass)
         if issubclass(kind, errors.DomainError)]


def test_no_error_kind_carries_an_http_status_or_code():
    for kind in KINDS:
        assert not {"status_code", "status", "code"} & set(dir(kind)), kind.__name__


def test_a_bad_request_names_its_fields_and_others_name_none():
    bad = errors.BadRequest([{"name": "date_to", "in": "query", "message": "is before date_from"}])
    assert bad.params == [{"name": "date_to", "in": "query", "message": "is before date_from"}]
    assert bad.message == errors.BadRequest.default_message
    assert errors.Conflict("Taken.").params == [] and errors.Conflict("Taken.").message == "Taken."
