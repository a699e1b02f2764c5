"""doctor: the machine checks, one small function per catalog id (F01-F25), run against a Host.

checks.py holds the registry; checks_*.py one subject each (Visual Studio, CUDA, components, install,
Linux, environment); run.py runs them. The binary readers live in binaries/, the log engine in buildlog/.
"""
