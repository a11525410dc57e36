"""Command-line adapters: one ``cmd_<name>.py`` per subcommand (see ``main.py``)."""
