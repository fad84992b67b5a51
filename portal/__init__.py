"""The organiser portal (API tokens, the door) and the ticket links `/t/<code>`."""
