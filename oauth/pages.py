"""The words of the sign-in, consent and connected-apps pages, in Dutch and English."""

from __future__ import annotations

TEXT = {
    "en": {
        "signin_title": "Sign in",
        "email": "Email address",
        "password": "Password",
        "signin": "Sign in",
        "signin_failed": "The email address or password is wrong.",
        "signin_wait": "Too many attempts to sign in. Wait {seconds} seconds, then try again.",
        "consent_title": "Allow access?",
        "consent_intro": "{client} wants to use the Event Agenda Service on your behalf.",
        "redirect_to": "You will be sent back to {host}.",
        "act_as": "Use it as",
        "yourself": "Myself",
        "role_owner": "owner", "role_editor": "editor", "role_door": "door",
        "role_viewer": "viewer",
        "scope_read": "Read the public agenda and your own events",
        "scope_attendance": "See attendance and external sales of the organisation's events",
        "scope_scan": "Scan tickets at the organisation's door",
        "allow": "Allow", "deny": "Deny",
        "never_tickets": "Apps never get to deliver ticket lists.",
        "apps_title": "Connected apps",
        "apps_none": "No app holds access to your account.",
        "apps_since": "since",
        "revoke": "Revoke",
        "signout": "Sign out",
        "error_title": "This request cannot be handled",
        "back_to": "Back to the app at {host}",
        "terms": "Terms",
    },
    "nl": {
        "signin_title": "Inloggen",
        "email": "E-mailadres",
        "password": "Wachtwoord",
        "signin": "Inloggen",
        "signin_failed": "Het e-mailadres of wachtwoord klopt niet.",
        "signin_wait": "Te veel pogingen om in te loggen. Wacht {seconds} seconden en probeer "
                       "het dan opnieuw.",
        "consent_title": "Toegang geven?",
        "consent_intro": "{client} wil de Event Agenda Service namens jou gebruiken.",
        "redirect_to": "Je wordt teruggestuurd naar {host}.",
        "act_as": "Gebruiken als",
        "yourself": "Mijzelf",
        "role_owner": "eigenaar", "role_editor": "redacteur", "role_door": "deur",
        "role_viewer": "kijker",
        "scope_read": "De openbare agenda en je eigen evenementen lezen",
        "scope_attendance": "Bezoekcijfers en externe verkoop van de evenementen van de "
                            "organisatie zien",
        "scope_scan": "Tickets scannen aan de deur van de organisatie",
        "allow": "Toestaan", "deny": "Weigeren",
        "never_tickets": "Apps kunnen nooit ticketlijsten aanleveren.",
        "apps_title": "Gekoppelde apps",
        "apps_none": "Geen enkele app heeft toegang tot je account.",
        "apps_since": "sinds",
        "revoke": "Intrekken",
        "signout": "Uitloggen",
        "error_title": "Dit verzoek kan niet worden afgehandeld",
        "back_to": "Terug naar de app op {host}",
        "terms": "Voorwaarden",
    },
}


def text_for(locale: str) -> dict[str, str]:
    """The page words in `locale` (nl or en)."""
    return TEXT.get(locale, TEXT["en"])
