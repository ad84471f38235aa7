"""Ports on 127.0.0.1: the local servers benchforge starts (Label Studio, its webhook receiver)
pick a free one, or keep the one they had while it is free."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A currently free loopback port (LS would silently move to the next one if busy)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_busy(port: int) -> bool:
    """True if something listens on 127.0.0.1:port. SO_REUSEADDR (as Django's server sets it)
    so that TIME_WAIT leftovers of a server we just stopped do not count as busy."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
        return False
