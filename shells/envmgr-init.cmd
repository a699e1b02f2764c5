@echo off
rem envmgr for cmd.exe: defines envmgr-activate / envmgr-deactivate macros for this console.
rem Run it from AutoRun (HKCU\Software\Microsoft\Command Processor\AutoRun) or `cmd /k`.
doskey envmgr-activate=call "%~dp0envmgr-activate.cmd" $*
doskey envmgr-deactivate=call "%~dp0envmgr-deactivate.cmd"
