"""Declared shapes: session entries, Open Responses items, ATIF v1.8 and the Arrow tables."""
