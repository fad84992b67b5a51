"""The request infrastructure every surface stands on: what a request is, who may make it,
its limits, its answers and errors, and the document it is checked against."""
