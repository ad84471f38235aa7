"""Pieces every pipeline shares: seeding, rejections, progress, Beam options."""
