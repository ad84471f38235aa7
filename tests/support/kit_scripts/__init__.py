"""Programs the tests run with a kit's own interpreter (``tests/support/kits.py``); they import
the kit and the standard library only, never benchforge, and answer in JSON on stdout."""
