"""Helpers that tests/ and bench/ share (neither imports the other): starting the app on a free local
port and launching Debian's headless Chromium (app_server)."""
