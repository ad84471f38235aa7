"""Single source of truth for every record type (see :mod:`schemas.core`)."""
