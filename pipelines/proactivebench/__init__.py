"""ProactiveBench (seed 000): episodes over ordered frame sequences with proactive actions."""
