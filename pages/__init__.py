"""The public pages every `url` of the API points to, and the API reference at /docs."""
