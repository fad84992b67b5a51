"""The words of the public pages, in Dutch and English, and dates as each language writes them."""

from __future__ import annotations

import datetime as dt

TEXT = {
    "en": {
        "site": "Event Agenda Service",
        "skip": "Skip to content",
        "language": "Nederlands", "other_lang": "nl",
        "when": "When", "where": "Where", "organiser": "Organiser", "lineup": "Line-up",
        "genres": "Genres", "price": "Price", "free": "Free entry", "unknown": "unknown",
        "age": "Minimum age", "tickets": "Tickets", "buy_tickets": "Buy tickets",
        "about": "About", "rules": "House rules", "dress": "Dress code",
        "timetable": "Set times", "maps": "Maps",
        "cancelled": "Cancelled", "cancelled_notice": "This event is cancelled.",
        "reason": "Reason", "postponed": "Postponed",
        "postponed_notice": "This event is postponed to {date}.",
        "add_calendar": "Add to calendar (.ics)", "token_prices": "Drink-token prices",
        "token_price": "Price of one token", "presale": "Presale", "onsite": "On site",
        "saving": "Saving with presale", "drink_tokens": "Tokens for a drink",
        "drink_price": "Price of a drink", "refund": "Refund of unused tokens",
        "refund_yes": "yes", "refund_no": "no", "refund_partial": "partly",
        "refund_unknown": "unknown",
        "reports": "Reports", "confidence": "Confidence",
        "confidence_low": "low", "confidence_medium": "medium", "confidence_high": "high",
        "previous_edition": "Previous edition", "season_median": "Median of the season's festivals",
        "event_page": "Event page",
        "address": "Address", "area": "Area", "website": "Website", "accessibility": "Accessibility",
        "facts": "Facts", "fact_capacity": "Capacity", "fact_rooms": "Rooms",
        "fact_lockers": "Lockers", "fact_cashless": "Cashless", "fact_smoking": "Smoking",
        "fact_cloakroom": "Cloakroom", "fact_parking": "Parking",
        "upcoming": "Coming up", "upcoming_count": "Events coming up: {count}",
        "no_upcoming": "Nothing announced yet.",
        "image_of": "Photo of {name}", "artwork_of": "Artwork of {name}",
        "verified": "Verified", "aliases": "Also known as", "agency": "Booking agency",
        "releases": "Releases", "links": "Links", "from": "From",
        "since": "Active since {year}", "events_count": "Events in the agenda: {count}",
        "city_in": "Nightlife in {city}", "country_NL": "Netherlands", "country_BE": "Belgium",
        "badges": "Badges", "no_badges": "No badges earned yet.",
        "earned_on": "earned on {date}", "badge_count": "{count} of {total} badges",
        "subscribe": "Subscribe (calendar)",
        "bad_request_title": "Bad request",
        "bad_request": "These parameters are not right:",
        "results": "Events found",
        "city": "City", "genre": "Genre", "date_from": "From", "date_to": "Until", "words": "Words",
        "genre_events": "{genre} events",
        "not_found_title": "Page not found",
        "not_found": "There is no public page at this address: it does not exist, is not "
                     "(or no longer) public, or has moved.",
        "home_title": "Going out in the Netherlands and Belgium",
        "home_intro": "Club nights, concerts and festivals: what is on today, this weekend "
                      "and in your city. The same agenda is open to apps through the API.",
        "search_title": "Search the agenda", "search_city": "City", "search_genre": "Genre",
        "search_any_genre": "Any genre", "search_date": "Date", "search": "Search",
        "search_results": "Found", "search_none": "Nothing matches this search.",
        "search_bad_city": "A city name is at most 100 characters.",
        "search_bad_genre": "Choose a genre from the list.",
        "search_bad_date": "The date is not a date (yyyy-mm-dd).",
        "today": "Today", "today_none": "Nothing on today.",
        "weekend": "This weekend", "weekend_none": "Nothing announced for the weekend yet.",
        "busiest_cities": "Busiest cities", "for_builders": "For organisers and developers",
        "api_blurb": "Every operation, its fields and examples.",
        "portal_blurb": "API tokens of your organisation and the door.",
        "terms_blurb": "What using the data asks of you.",
        "terms_version": "Version {version}", "terms_rules": "Rules",
        "terms_attribution": "Wherever you show the data, credit the service with this link:",
        "terms_limits": "Rate limits",
        "terms_limits_text": "Per token: {minute} requests a minute and {day} a day.",
        "terms_provider": "Provider", "terms_name": "Name", "terms_address": "Address",
        "terms_coc": "Chamber of Commerce", "terms_vat": "VAT number", "terms_contact": "Contact",
        "site_nav": "Site", "nav_agenda": "Agenda", "nav_api": "API reference",
        "nav_portal": "Organiser portal",
        "too_many_title": "Too many pages at once",
        "too_many": "This address opened more than {limit} pages in a minute. Please wait "
                    "{seconds} seconds and try again.",
        "attribution": "Attribution", "terms": "Terms of use",
        "docs_title": "API reference",
        "sources_title": "Where the data comes from",
        "sources_intro": "Events are entered by organisations and the agenda team or "
                         "imported from partner feeds; token prices come from visitors' "
                         "reports. Records per source:",
        "source_records": "{count} records",
    },
    "nl": {
        "site": "Event Agenda Service",
        "skip": "Naar de inhoud",
        "language": "English", "other_lang": "en",
        "when": "Wanneer", "where": "Waar", "organiser": "Organisatie", "lineup": "Line-up",
        "genres": "Genres", "price": "Prijs", "free": "Gratis toegang", "unknown": "onbekend",
        "age": "Minimumleeftijd", "tickets": "Tickets", "buy_tickets": "Tickets kopen",
        "about": "Over", "rules": "Huisregels", "dress": "Dresscode",
        "timetable": "Speeltijden", "maps": "Plattegronden",
        "cancelled": "Geannuleerd", "cancelled_notice": "Dit evenement is geannuleerd.",
        "reason": "Reden", "postponed": "Uitgesteld",
        "postponed_notice": "Dit evenement is uitgesteld naar {date}.",
        "add_calendar": "Zet in je agenda (.ics)", "token_prices": "Muntjesprijzen",
        "token_price": "Prijs van één muntje", "presale": "Voorverkoop", "onsite": "Ter plekke",
        "saving": "Besparing met voorverkoop", "drink_tokens": "Muntjes voor een drankje",
        "drink_price": "Prijs van een drankje", "refund": "Teruggave van ongebruikte muntjes",
        "refund_yes": "ja", "refund_no": "nee", "refund_partial": "deels",
        "refund_unknown": "onbekend",
        "reports": "Meldingen", "confidence": "Betrouwbaarheid",
        "confidence_low": "laag", "confidence_medium": "gemiddeld", "confidence_high": "hoog",
        "previous_edition": "Vorige editie",
        "season_median": "Mediaan van de festivals van dit seizoen",
        "event_page": "Evenementpagina",
        "address": "Adres", "area": "Buurt", "website": "Website",
        "accessibility": "Toegankelijkheid",
        "facts": "Feiten", "fact_capacity": "Capaciteit", "fact_rooms": "Zalen",
        "fact_lockers": "Kluisjes", "fact_cashless": "Cashless", "fact_smoking": "Roken",
        "fact_cloakroom": "Garderobe", "fact_parking": "Parkeren",
        "upcoming": "Binnenkort", "upcoming_count": "Komende evenementen: {count}",
        "no_upcoming": "Nog niets aangekondigd.",
        "image_of": "Foto van {name}", "artwork_of": "Artwork van {name}",
        "verified": "Geverifieerd", "aliases": "Ook bekend als", "agency": "Boekingskantoor",
        "releases": "Releases", "links": "Links", "from": "Uit",
        "since": "Actief sinds {year}", "events_count": "Evenementen in de agenda: {count}",
        "city_in": "Uitgaan in {city}", "country_NL": "Nederland", "country_BE": "België",
        "badges": "Badges", "no_badges": "Nog geen badges verdiend.",
        "earned_on": "verdiend op {date}", "badge_count": "{count} van {total} badges",
        "subscribe": "Abonneren (agenda)",
        "bad_request_title": "Ongeldig verzoek",
        "bad_request": "Deze parameters kloppen niet:",
        "results": "Gevonden",
        "city": "Stad", "genre": "Genre", "date_from": "Vanaf", "date_to": "Tot en met",
        "words": "Woorden",
        "genre_events": "{genre}-evenementen",
        "not_found_title": "Pagina niet gevonden",
        "not_found": "Op dit adres staat geen openbare pagina: ze bestaat niet, is niet "
                     "(of niet meer) openbaar, of is verplaatst.",
        "home_title": "Uitgaan in Nederland en België",
        "home_intro": "Clubnachten, concerten en festivals: wat er vandaag, dit weekend en in "
                      "jouw stad te doen is. Dezelfde agenda staat via de API open voor apps.",
        "search_title": "Zoek in de agenda", "search_city": "Stad", "search_genre": "Genre",
        "search_any_genre": "Elk genre", "search_date": "Datum", "search": "Zoeken",
        "search_results": "Gevonden", "search_none": "Niets past bij deze zoekopdracht.",
        "search_bad_city": "Een plaatsnaam is hoogstens 100 tekens.",
        "search_bad_genre": "Kies een genre uit de lijst.",
        "search_bad_date": "De datum is geen datum (jjjj-mm-dd).",
        "today": "Vandaag", "today_none": "Vandaag is er niets.",
        "weekend": "Dit weekend", "weekend_none": "Voor het weekend is nog niets aangekondigd.",
        "busiest_cities": "Drukste steden", "for_builders": "Voor organisaties en ontwikkelaars",
        "api_blurb": "Elke operatie, haar velden en voorbeelden (Engels).",
        "portal_blurb": "De API-tokens van je organisatie en de deur.",
        "terms_blurb": "Wat het gebruik van de gegevens van je vraagt.",
        "terms_version": "Versie {version}", "terms_rules": "Regels",
        "terms_attribution": "Vermeld de dienst overal waar je de gegevens toont, met deze link:",
        "terms_limits": "Limieten",
        "terms_limits_text": "Per token: {minute} verzoeken per minuut en {day} per dag.",
        "terms_provider": "Aanbieder", "terms_name": "Naam", "terms_address": "Adres",
        "terms_coc": "KvK-nummer", "terms_vat": "Btw-nummer", "terms_contact": "Contact",
        "site_nav": "Site", "nav_agenda": "Agenda", "nav_api": "API-referentie",
        "nav_portal": "Organisatieportaal",
        "too_many_title": "Te veel pagina's tegelijk",
        "too_many": "Dit adres opende meer dan {limit} pagina's in een minuut. Wacht "
                    "{seconds} seconden en probeer het dan opnieuw.",
        "attribution": "Bronvermelding", "terms": "Gebruiksvoorwaarden",
        "docs_title": "API-referentie",
        "sources_title": "Waar de gegevens vandaan komen",
        "sources_intro": "Evenementen worden ingevoerd door organisaties en de redactie of "
                         "ingelezen uit feeds van partners; muntprijzen komen uit meldingen "
                         "van bezoekers. Records per bron:",
        "source_records": "{count} records",
    },
}

WEEKDAYS = {
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "nl": ("maandag", "dinsdag", "woensdag", "donderdag", "vrijdag", "zaterdag", "zondag"),
}
MONTHS = {
    "en": ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"),
    "nl": ("januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus",
           "september", "oktober", "november", "december"),
}


def text_for(locale: str) -> dict[str, str]:
    """The page words in `locale` (nl or en)."""
    return TEXT.get(locale, TEXT["en"])


def long_date(day: dt.date, locale: str) -> str:
    """`Friday 3 May 2024` or `vrijdag 3 mei 2024`."""
    weekday = WEEKDAYS[locale][day.weekday()]
    return f"{weekday} {day.day} {MONTHS[locale][day.month - 1]} {day.year}"


def short_date(day: dt.date, locale: str) -> str:
    """`3 May 2024` or `3 mei 2024`, for tables."""
    return f"{day.day} {MONTHS[locale][day.month - 1][:3]} {day.year}"


def money(amount: float, locale: str) -> str:
    """`€ 12.50` or `€ 12,50`."""
    figure = f"{amount:.2f}"
    return f"€ {figure.replace('.', ',') if locale == 'nl' else figure}"
