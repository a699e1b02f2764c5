"""The click machinery only: main.py (the group, Ctx, the command registry, the error edge), options.py
(the selector and recipe options every command shares, and what they resolve to) and flags.py (checks on flag
values that click types cannot express).

May import every layer below commands/; names its commands as strings and never imports them."""
