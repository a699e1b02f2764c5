"""doctor: checks (one small function per catalog id F01…F23) and build-log scanning."""
