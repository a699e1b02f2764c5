@echo off
rem envmgr-activate [selectors]: apply an envmgr environment to this cmd.exe session.
rem cmd cannot evaluate a command's output, so the script goes through a temporary file.
set "__ENVMGR_TMP=%TEMP%\envmgr-activate-%RANDOM%%RANDOM%.cmd"
envmgr export --activate --format cmd %* > "%__ENVMGR_TMP%"
if errorlevel 1 goto envmgr_failed
call "%__ENVMGR_TMP%"
del "%__ENVMGR_TMP%" >nul 2>&1
set "__ENVMGR_TMP="
exit /b 0
:envmgr_failed
del "%__ENVMGR_TMP%" >nul 2>&1
set "__ENVMGR_TMP="
exit /b 1
