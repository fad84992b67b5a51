"""The organiser endpoints: attendance, external sales, the door, external tickets.

Every answer is about the token's own organisation: private, never cached, and
an event of another organisation is a 404 exactly like a missing one.
"""

from agenda.request import caller, session
from handlers import envelope
from handlers.schemas.organiser import AttendanceSchema
from models import attendance
from models.db import now

attendance_schema = AttendanceSchema()


def get_attendance(id_: str):
    """Attendance counts and audience groups of one of the organisation's events."""
    report = attendance.get_attendance(session(), event_key=id_,
                                       organisation_id=caller().organisation_id, now=now())
    return envelope.private(attendance_schema.dump(report))
