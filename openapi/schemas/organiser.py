"""Organiser answers: attendance, external sales, scan verdicts, external tickets."""

from marshmallow import fields, post_dump

from openapi.schemas import OutputSchema


class ExternalSalesSchema(OutputSchema):
    """`ExternalSales`: the last reported count of the organisation's own shop."""

    ok = fields.Constant(True)
    eventId = fields.String()  # noqa: N815 - the API's field name
    external = fields.Boolean()
    sold = fields.Integer()
    updatedAt = fields.Integer()  # noqa: N815 - the API's field name


class ScanResultSchema(OutputSchema):
    """`ScanResult`: the verdict for the door screen (`reason` only on a refusal)."""

    ok = fields.Boolean()
    status = fields.String()
    title = fields.String()
    sub = fields.String()
    type = fields.String()
    holder = fields.String()
    eventId = fields.String()  # noqa: N815 - the API's field name
    scannedAt = fields.Integer()  # noqa: N815 - the API's field name
    reason = fields.String()

    @post_dump
    def _only_refusals_have_a_reason(self, data, **_kwargs):
        if data.get("reason") is None:
            data.pop("reason", None)
        return data


class AudienceRowSchema(OutputSchema):
    """`AudienceRow`: one shown group."""

    key = fields.String()
    count = fields.Integer()


class AudienceBreakdownSchema(OutputSchema):
    """`AudienceBreakdown`: shown rows, the small groups summed in `other`, the rest hidden."""

    rows = fields.List(fields.Nested(AudienceRowSchema))
    other = fields.Integer(allow_none=True)
    hidden = fields.Integer()


class AudienceSchema(OutputSchema):
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


class AttendanceCountsSchema(OutputSchema):
    """`AttendanceCounts`: exact numbers."""

    going = fields.Integer()
    interested = fields.Integer()
    tickets = fields.Integer()


class AttendanceSchema(OutputSchema):
    """`Attendance`: the counts and the audience of an own event."""

    ok = fields.Constant(True)
    eventId = fields.String(attribute="event_id")  # noqa: N815 - the API's field name
    counts = fields.Nested(AttendanceCountsSchema)
    audience = fields.Nested(AudienceSchema)


class DeliveryItemResultSchema(OutputSchema):
    """`DeliveryItemResult`: `member` only on added, `reason` only on refused."""

    index = fields.Integer()
    code = fields.String()
    status = fields.String()
    member = fields.Boolean()
    reason = fields.String()

    @post_dump
    def _only_what_the_verdict_has(self, data, **_kwargs):
        return {key: value for key, value in data.items() if value is not None}


class DeliveryTotalsSchema(OutputSchema):
    """`DeliveryTotals`: totals over the items of one delivery."""

    received = fields.Integer()
    added = fields.Integer()
    duplicates = fields.Integer()
    refused = fields.Integer()
    matched = fields.Integer()


class DeliveryProcessedSchema(OutputSchema):
    """`DeliveryProcessed`: what the request got through within its time budget."""

    linked = fields.Integer()
    mailed = fields.Integer()
    skipped = fields.Integer()
    failed = fields.Integer()
    left = fields.Integer()
    budgetOut = fields.Boolean(attribute="budget_out")  # noqa: N815 - the API's field name


class DeliveryResultSchema(OutputSchema):
    """`DeliveryResult`: one verdict per item, the totals and what was processed."""

    ok = fields.Constant(True)
    batchId = fields.String(attribute="batch_id")  # noqa: N815 - the API's field name
    eventId = fields.String(attribute="event_id")  # noqa: N815 - the API's field name
    results = fields.List(fields.Nested(DeliveryItemResultSchema))
    totals = fields.Function(lambda delivery: DeliveryTotalsSchema().dump(delivery))
    processed = fields.Nested(DeliveryProcessedSchema)


class BatchSchema(OutputSchema):
    """`Batch`: one delivery with its figures."""

    id = fields.String()
    source = fields.String()
    via = fields.String()
    received = fields.Integer()
    added = fields.Integer()
    duplicates = fields.Integer()
    refused = fields.Integer()
    linked = fields.Integer()
    createdAt = fields.Integer(attribute="created_at")  # noqa: N815 - the API's field name


class ExternalTicketCountsSchema(OutputSchema):
    """`ExternalTicketCounts`: delivered tickets by state."""

    delivered = fields.Integer()
    linked = fields.Integer()
    pending = fields.Integer()
    todo = fields.Integer()


class ExternalTicketsStatusSchema(OutputSchema):
    """`ExternalTicketsStatus`: the counts and the last twenty deliveries, newest first."""

    ok = fields.Constant(True)
    eventId = fields.String(attribute="event_id")  # noqa: N815 - the API's field name
    counts = fields.Function(lambda status: ExternalTicketCountsSchema().dump(status))
    batches = fields.List(fields.Nested(BatchSchema))
