"""The Event Agenda Service: application factory, settings and command line."""
