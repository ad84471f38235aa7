"""ProactiveBench: episodes over ordered frame sequences with proactive actions."""
