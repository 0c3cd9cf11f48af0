"""Unit tests: parsing, planning, rendering and the CLI; no daemons, no network."""
