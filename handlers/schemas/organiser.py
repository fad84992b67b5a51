"""Organiser answers, one schema per OpenAPI component."""

from marshmallow import Schema, fields


class AudienceRowSchema(Schema):
    """`AudienceRow`: one shown group."""

    key = fields.String()
    count = fields.Integer()


class AudienceBreakdownSchema(Schema):
    """`AudienceBreakdown`: shown rows, the small groups summed in `other`, the rest hidden."""

    rows = fields.List(fields.Nested(AudienceRowSchema))
    other = fields.Integer(allow_none=True)
    hidden = fields.Integer()


class AudienceSchema(Schema):
    """`Audience`: who comes, in groups of at least `min_cell`."""

    computed_at = fields.Integer()
    min_cell = fields.Integer()
    total = fields.Integer()
    returning = fields.Integer()
    new = fields.Integer()
    returning_share = fields.Integer()
    regions = fields.Nested(AudienceBreakdownSchema)
    ages = fields.Nested(AudienceBreakdownSchema)
    genres = fields.Nested(AudienceBreakdownSchema)


class AttendanceCountsSchema(Schema):
    """`AttendanceCounts`: exact numbers."""

    going = fields.Integer()
    interested = fields.Integer()
    tickets = fields.Integer()


class AttendanceSchema(Schema):
    """`Attendance`: the counts and the audience of an own event."""

    ok = fields.Constant(True)
    eventId = fields.String(attribute="event_id")  # noqa: N815 - the API's field name
    counts = fields.Nested(AttendanceCountsSchema)
    audience = fields.Nested(AudienceSchema)
