"""Sending mail: over SMTP (`AGENDA_SMTP_URL`), or to the log when no server is configured.

`mailer_for(smtp_url, ...)` picks the mailer. `smtp://host:port` sends in plain
SMTP (`?starttls=1` upgrades the connection first), `smtps://host:port` over
implicit TLS; a user and password in the URL log in. One connection is opened
on the first mail and reused for the next ones until `close()`.

A failed send raises `MailError`: `permanent` when the server refused for good
(a 5xx answer: retrying cannot help), `connection` when the server could not
be reached at all (the caller stops the run instead of trying every queued
mail against a server that is down).
"""

from __future__ import annotations

import contextlib
import logging
import smtplib
import ssl
from email.charset import QP, Charset
from email.header import Header
from email.mime.text import MIMEText
from email.utils import formataddr, formatdate, make_msgid, parseaddr
from typing import Protocol
from urllib.parse import parse_qs, unquote, urlsplit

log = logging.getLogger("agenda.mail")

# Socket timeout for one SMTP conversation step, when the caller gives none.
DEFAULT_TIMEOUT = 10.0


class MailError(Exception):
    """A mail could not be sent."""

    def __init__(self, message: str, *, permanent: bool = False, connection: bool = False):
        super().__init__(message)
        self.permanent = permanent
        self.connection = connection


class Mailer(Protocol):
    """Sends messages; `close()` ends any open connection."""

    def send(self, *, to: str, subject: str, body: str) -> None:
        """Send one plain-text mail or raise `MailError`."""

    def close(self) -> None:
        """Release the connection, if any."""


def redact(address: str) -> str:
    """An address safe for the log: the first character of the local part and the domain."""
    local, _, domain = address.rpartition("@")
    return f"{local[:1]}***@{domain}" if local else "***"


class LogMailer:
    """No SMTP server set: the mail goes to the log (recipient redacted) and counts as sent."""

    def __init__(self, *, sender: str):
        self.sender = sender

    def send(self, *, to: str, subject: str, body: str) -> None:
        """Write the mail to the log."""
        log.info("mail (AGENDA_SMTP_URL is not set) to %s: %s\n%s", redact(to), subject, body)

    def close(self) -> None:
        """Nothing to release."""


class SmtpMailer:
    """Sends over one reused SMTP connection (smtplib)."""

    def __init__(self, smtp_url: str, *, sender: str, timeout: float = DEFAULT_TIMEOUT):
        parts = urlsplit(smtp_url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ValueError("AGENDA_SMTP_URL must be smtp://host:port or smtps://host:port")
        self.implicit_tls = parts.scheme == "smtps"
        self.host = parts.hostname
        self.port = parts.port or (465 if self.implicit_tls else 25)
        self.username = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password) if parts.password else None
        query = parse_qs(parts.query)
        self.starttls = query.get("starttls", ["0"])[0].lower() in ("1", "true", "yes")
        self.sender = sender
        self.sender_address = parseaddr(sender)[1]
        self.timeout = timeout
        self._smtp: smtplib.SMTP | None = None

    def _connect(self) -> smtplib.SMTP:
        if self._smtp is not None:
            return self._smtp
        try:
            if self.implicit_tls:
                smtp = smtplib.SMTP_SSL(self.host, self.port, timeout=self.timeout,
                                        context=ssl.create_default_context())
            else:
                smtp = smtplib.SMTP(self.host, self.port, timeout=self.timeout)
                if self.starttls:
                    smtp.starttls(context=ssl.create_default_context())
            if self.username:
                smtp.login(self.username, self.password or "")
        except (OSError, smtplib.SMTPException) as error:
            raise MailError(f"cannot reach the SMTP server {self.host}:{self.port}: "
                            f"{error.__class__.__name__}: {error}", connection=True) from error
        self._smtp = smtp
        return smtp

    def send(self, *, to: str, subject: str, body: str) -> None:
        """Send one mail; a reused connection the server has closed is opened again once."""
        recipient = _one_line(to)
        message = _message(sender=self.sender, to=recipient, subject=subject, body=body)
        try:
            self._send(recipient, message)
        except smtplib.SMTPServerDisconnected:
            # Servers close idle or long-used connections; that says nothing about the mail.
            self._send(recipient, message)

    def _send(self, recipient: str, message: bytes) -> None:
        reused = self._smtp is not None
        smtp = self._connect()
        try:
            smtp.sendmail(self.sender_address, [recipient], message)
        except smtplib.SMTPServerDisconnected as error:
            self._drop()
            if reused:
                raise
            raise MailError(f"SMTP connection lost: {error}", connection=True) from error
        except smtplib.SMTPRecipientsRefused as error:
            codes = [code for code, _text in error.recipients.values()]
            raise MailError(f"recipient refused: {codes}",
                            permanent=all(code >= 500 for code in codes)) from error
        except smtplib.SMTPResponseException as error:
            # Sender refused, data refused, ...: the server answered; 5xx is for good,
            # 421 means it is closing the connection.
            if error.smtp_code == 421:
                self._drop()
            raise MailError(f"SMTP {error.smtp_code}: {_text(error.smtp_error)}",
                            permanent=error.smtp_code >= 500) from error
        except (OSError, smtplib.SMTPException) as error:
            self._drop()
            raise MailError(f"SMTP connection lost: {error.__class__.__name__}: {error}",
                            connection=True) from error

    def _drop(self) -> None:
        smtp, self._smtp = self._smtp, None
        if smtp is not None:
            with contextlib.suppress(OSError):
                smtp.close()

    def close(self) -> None:
        """Say goodbye to the server, if connected."""
        smtp, self._smtp = self._smtp, None
        if smtp is None:
            return
        try:
            smtp.quit()
        except (OSError, smtplib.SMTPException):
            smtp.close()


_UTF8_QP = Charset("utf-8")
_UTF8_QP.body_encoding = QP


def _one_line(value: str) -> str:
    """A header value cannot carry a line break (no header injection through a title)."""
    return " ".join(value.splitlines()).strip()


def _message(*, sender: str, to: str, subject: str, body: str) -> bytes:
    """A plain-text UTF-8 mail (the compat32 classes: several times faster than EmailMessage)."""
    message = MIMEText(body, "plain", _UTF8_QP)
    message["From"] = sender
    message["To"] = to
    subject = _one_line(subject)
    message["Subject"] = subject if subject.isascii() else Header(subject, "utf-8")
    message["Date"] = formatdate(usegmt=True)
    message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2].strip(">") or None)
    return message.as_bytes()


def _text(raw) -> str:
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)


def mailer_for(smtp_url: str | None, *, sender_name: str, sender_address: str,
               timeout: float = DEFAULT_TIMEOUT) -> Mailer:
    """The SMTP mailer for `smtp_url`, or the log mailer when it is unset (decisions.md)."""
    sender = formataddr((sender_name, sender_address))
    if not smtp_url:
        return LogMailer(sender=sender)
    return SmtpMailer(smtp_url, sender=sender, timeout=timeout)
