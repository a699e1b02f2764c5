"""Tests of envmgr/doctor/."""
