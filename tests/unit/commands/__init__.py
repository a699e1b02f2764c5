"""Tests of envmgr/commands/."""
